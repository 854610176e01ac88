/**
 * The worker thread that holds the PostgreSQL connection (`postgres-channel.ts` starts it). The
 * main thread posts one request at a time and blocks until this thread has answered it and woken
 * it through the shared signal; this thread is free to await the network meanwhile. One `pg`
 * Client, connected on the first request and again after it was lost, but never in the middle of
 * a transaction: a request sent inside one finds the connection it began on, or fails. A second
 * Client, connected when first asked, runs a statement aside: outside the transaction, which it
 * neither waits for nor ends (the leader renews its lease while its cycle's transaction runs).
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import pg from 'pg';
import { getOrAdd } from '../lib/get-or-add.js';
import { pgErrorParts, type PostgresWireError } from './postgres-error.js';
import { ReconnectingClient } from './reconnecting-client.js';

/** What the main thread gives the worker when it starts it. */
export interface PostgresWorkerData {
  port: MessagePort;
  /** [0]: the sequence number of the last request answered; the main thread waits on it. */
  signal: Int32Array;
  connection: PostgresConnection;
}

/** How the worker connects (the URL holds the password: never logged, never sent back). */
export interface PostgresConnection {
  url: string;
  /** node:tls options (`ca`, `rejectUnauthorized`); undefined: as the URL's `sslmode` says. */
  ssl: { ca?: string; rejectUnauthorized: boolean } | undefined;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /**
   * The server ends a session left idle inside a transaction this long (a client gone without the
   * server seeing it, behind a network that dropped it): its locks, the fence's among them, go with it.
   */
  idleInTransactionTimeoutMs: number;
}

/** A statement with parameters. */
export type PostgresQuery = { op: 'query'; text: string; values: unknown[]; rowMode: 'array' | undefined };

/** SQL text without parameters. */
export type PostgresExec = { op: 'exec'; text: string };

/** A statement run at once on the second connection, outside any transaction (see the file's comment). */
export type PostgresAside = { op: 'aside'; text: string; values: unknown[] };

/**
 * What the main thread asks: a statement with parameters, SQL text without, several of those in
 * order (a transaction's writes held back, then the statement whose answer is awaited: one round
 * trip between the threads for all of them, `postgres-database.ts`), a statement aside, or goodbye.
 */
export type PostgresAsk =
  | PostgresQuery
  | PostgresExec
  | { op: 'batch'; asks: (PostgresQuery | PostgresExec)[] }
  | PostgresAside
  | { op: 'close' };

/** One request. `inTransaction`: sent between BEGIN and its end, so never on a new connection. */
export type PostgresRequest = PostgresAsk & { seq: number; inTransaction: boolean };

/**
 * The answer to one request: of a batch, the last statement's rows, and every statement's count
 * (`counts`) and first returned value (`firsts`, of a lone statement too: an `INSERT … RETURNING
 * id`'s id, else null); a batch stops at its first failure, which is the answer's error.
 */
export type PostgresReply = { seq: number } & (
  | { ok: true; rows: unknown[]; rowCount: number; counts?: number[]; firsts?: unknown[] }
  | { ok: false; error: PostgresWireError }
);

const INT8 = 20;
const NUMERIC = 1700;

/**
 * BIGINT (epoch ms, ids, COUNT) and NUMERIC (SUM of BIGINT) as JavaScript numbers, as SQLite
 * gives them: every value the stores keep is far below 2^53.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 || oid === NUMERIC ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const { port, signal, connection } = workerData as PostgresWorkerData;
/** Statement texts already parsed on this connection, by name (the server keeps the plan). */
let named = new Map<string, string>();

port.on('message', (request: PostgresRequest) => {
  void answer(request).then((reply) => {
    port.postMessage(reply);
    Atomics.store(signal, 0, request.seq);
    Atomics.notify(signal, 0);
  });
});

async function answer(request: PostgresRequest): Promise<PostgresReply> {
  try {
    if (request.op === 'close') {
      await Promise.all([main.drop(), aside.drop()]);
      return { seq: request.seq, ok: true, rows: [], rowCount: 0 };
    }
    if (request.op === 'aside') {
      const result = await (await aside.client()).query({ text: request.text, values: request.values });
      const rows = result.rows as unknown[];
      return { seq: request.seq, ok: true, rows, rowCount: result.rowCount ?? 0, firsts: [firstValue(rows)] };
    }
    const c = await connected(request.inTransaction);
    if (request.op !== 'batch') {
      const result = await run(c, request);
      return { seq: request.seq, ok: true, ...result, firsts: [firstValue(result.rows)] };
    }
    // All sent at once (the client pipelines: see `newClient`), answered in order. The first failure
    // fails the batch (the catch below): a batch is always inside a transaction, which it aborts,
    // so the statements after it fail too, and every held write fails with that first error.
    const results = await Promise.all(request.asks.map((ask) => run(c, ask)));
    const counts = results.map((r) => r.rowCount);
    const firsts = results.map((r) => firstValue(r.rows));
    return { seq: request.seq, ok: true, ...results[results.length - 1]!, counts, firsts };
  } catch (err) {
    const error = wireError(err);
    // A statement aside fails on its own: the connection of the transaction is not touched.
    if (error.connection) void (request.op === 'aside' ? aside : main).drop();
    return { seq: request.seq, ok: false, error };
  }
}

/** The first column of the first row (an object's first member, an array's first item), or null. */
function firstValue(rows: readonly unknown[]): unknown {
  const row = rows[0];
  if (row === undefined || row === null) return null;
  return (Array.isArray(row) ? row[0] : Object.values(row as object)[0]) ?? null;
}

/** One statement on the connection: its rows, and how many it returned or changed. */
async function run(c: pg.Client, ask: PostgresQuery | PostgresExec): Promise<{ rows: unknown[]; rowCount: number }> {
  if (ask.op === 'exec') {
    await c.query(ask.text);
    return { rows: [], rowCount: 0 };
  }
  const result = await c.query({
    name: statementName(ask.text),
    text: ask.text,
    values: ask.values,
    ...(ask.rowMode ? { rowMode: ask.rowMode } : {}),
  });
  return { rows: result.rows as unknown[], rowCount: result.rowCount ?? 0 };
}

/** The live client; a new one when there is none and no transaction is under way. */
async function connected(inTransaction: boolean): Promise<pg.Client> {
  if (main.live) return main.live;
  if (inTransaction) throw new LostConnection('the connection to PostgreSQL was lost during the transaction');
  named = new Map();
  return main.client();
}

/**
 * A client as the connection's options say. `pipeline`: a statement is sent without waiting for the
 * answer to the last (`pg`'s pipeline mode), so a batch of held writes costs the server's time, not
 * one network round trip each.
 */
function newClient(applicationName: string, pipeline: boolean): pg.Client {
  return new pg.Client({
    pipeline,
    connectionString: connection.url,
    ...(connection.ssl ? { ssl: connection.ssl } : {}),
    connectionTimeoutMillis: connection.connectTimeoutMs,
    statement_timeout: connection.statementTimeoutMs,
    lock_timeout: connection.lockTimeoutMs,
    idle_in_transaction_session_timeout: connection.idleInTransactionTimeoutMs,
    application_name: applicationName,
    keepAlive: true,
    types,
  });
}

/** The connection of the transaction (and of every statement but those aside). */
const main = new ReconnectingClient(() => newClient('deploy-watchdog', true));
/** The connection of statements aside (see the file's comment). */
const aside = new ReconnectingClient(() => newClient('deploy-watchdog aside', false));

/** A name per distinct statement text, so the server parses each once per connection. */
function statementName(text: string): string {
  return getOrAdd(named, text, () => `dw${named.size + 1}`);
}

class LostConnection extends Error {}

function wireError(err: unknown): PostgresWireError {
  const { message, code, severity } = pgErrorParts(err, connection.url);
  // ERROR ends the statement, FATAL and PANIC the session (a shutdown, a crash).
  const gone = err instanceof LostConnection || severity === undefined || severity === 'FATAL' || severity === 'PANIC';
  return { message, code, connection: gone };
}
