/**
 * What a PostgreSQL failure means to the daemon: a storage fault (the server unreachable, a full
 * disk, a lock not granted in time, a refused login) is a {@link StoreError} in the words the
 * SQLite faults use; any other error of a statement (a constraint, a syntax error) is the SQL's own,
 * a {@link PostgresError}, as a SqliteError is on SQLite.
 */
import { StoreError, type StoreErrorCause } from './store-error.js';

/** A failure as it crosses to the main thread. */
export interface PostgresWireError {
  message: string;
  /** The SQLSTATE, or Node's error code (ECONNREFUSED, a TLS code). */
  code: string | undefined;
  /** True when the connection is gone (or never came): the request may not have reached the server. */
  connection: boolean;
}

/**
 * What `pg` threw: its message, with the password of `url` taken out should a library ever quote
 * it; its code; and its severity, which the server's own errors carry (what failed on the way to
 * the server has none).
 */
export function pgErrorParts(
  err: unknown,
  url: string,
): { message: string; code: string | undefined; severity: string | undefined } {
  const e = err as { message?: unknown; code?: unknown; severity?: unknown };
  let message = typeof e?.message === 'string' ? e.message : String(err);
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    // No URL to read a password from: none to take out.
  }
  if (password.length >= 4) message = message.split(password).join('<secret>');
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { message, code: text(e?.code), severity: text(e?.severity) };
}

/** A statement PostgreSQL refused for what it says (not for the state of the server). */
export class PostgresError extends Error {
  override name = 'PostgresError';

  constructor(
    message: string,
    /** The SQLSTATE (`23505`: a unique key taken). */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** TLS failures, by Node's code: the server's certificate was not trusted as configured. */
const TLS_CODES = /^(SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_|CERT_|ERR_TLS_|ERR_SSL_)/;

/** The cause of a storage fault, and what to say of it; undefined for a statement's own error. */
function faultOf(e: PostgresWireError): [StoreErrorCause, string] | undefined {
  const code = e.code ?? '';
  if (TLS_CODES.test(code) || /server does not support SSL/.test(e.message))
    return ['tls', 'the TLS connection to PostgreSQL failed (see state.tls)'];
  if (code === '28000' || code === '28P01') return ['refused', 'PostgreSQL refused the login'];
  if (code === '3D000') return ['missing', 'the database does not exist (create it, or fix state.url)'];
  if (code === '42501') return ['refused', 'PostgreSQL refused the access (grant the user rights on its database)'];
  if (code === '53300') return ['refused', 'PostgreSQL refused the connection (too many connections)'];
  if (code === '53100') return ['disk-full', "the database server's disk is full"];
  if (code === '55P03' || code === '40P01')
    return ['locked', 'the database is locked by another process (is another deploy-watchdog running on it?)'];
  if (code === '57014') return ['timeout', 'the statement took longer than state.statement_timeout and was canceled'];
  if (code === '25006') return ['unwritable', 'the server is read-only (a standby?)'];
  if (code === 'XX001' || code === 'XX002') return ['corrupt', 'the server reports corrupt data'];
  if (code.startsWith('58') || code.startsWith('53')) return ['io', `the server failed (${code})`];
  if (e.connection) return ['unreachable', 'PostgreSQL cannot be reached, or the connection was lost'];
  return undefined;
}

/** The error to throw for a failed request to the database at `where` (a URL without its password). */
export function postgresFailure(where: string, e: PostgresWireError): StoreError | PostgresError {
  const fault = faultOf(e);
  if (!fault) return new PostgresError(e.message, e.code);
  return new StoreError(where, fault[0], `${fault[1]} (${e.message})`, { cause: new PostgresError(e.message, e.code) });
}
