/**
 * The state the configuration's `state` section names: the SQLite file at `state.path` (the
 * default), or the PostgreSQL database at `state.url`. Every command and the daemon open it here,
 * so both engines are reached the same way from the same config.
 */
import fs from 'node:fs';
import type { StateConfig } from '../config/load-config.js';
import type { Secret } from '../lib/secret.js';
import { Store, type PostgresTarget, type StoreOptions } from './store.js';
import { StoreError } from './store-error.js';

/** Opens the state `state` names (see the file's comment); throws {@link StoreError} as {@link Store.open} does. */
export function openState(state: StateConfig, options: StoreOptions = {}): Store {
  if (state.url === undefined) return Store.open(state.path, options);
  return Store.openPostgres(postgresTarget({ ...state, url: state.url }), options);
}

/** How to reach the PostgreSQL state `state.url` names (its TLS CA read): for the store, and the leader lease beside it. */
export function postgresTarget(state: StateConfig & { url: Secret }): PostgresTarget {
  const tls = state.tls && {
    rejectUnauthorized: state.tls.reject_unauthorized,
    ...(state.tls.ca_file ? { ca: readCa(state.tls.ca_file) } : {}),
  };
  return {
    url: state.url,
    ...(tls ? { tls } : {}),
    connectTimeoutMs: state.connect_timeout,
    statementTimeoutMs: state.statement_timeout,
  };
}

/**
 * Whether two configurations name the same state, reached the same way: the same file, or the
 * same URL with the same TLS and timeouts. (Retention may differ: it is not where the state is.)
 */
export function sameState(a: StateConfig, b: StateConfig): boolean {
  return (
    a.path === b.path &&
    a.url?.reveal() === b.url?.reveal() &&
    JSON.stringify(connectionOf(a)) === JSON.stringify(connectionOf(b))
  );
}

function connectionOf(state: StateConfig): unknown {
  return state.url === undefined ? null : [state.tls, state.connect_timeout, state.statement_timeout];
}

/** The PEM text of `state.tls.ca_file` (loading the config checked it could be read; this says so again should it have gone since). */
function readCa(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new StoreError(file, 'tls', `state.tls.ca_file cannot be read (${(err as Error).message})`, { cause: err });
  }
}
