/**
 * The PostgreSQL state database (`state.url`): the same interface as SQLite's, reached
 * synchronously through a worker thread that holds one connection (`postgres-channel.ts`). One
 * connection, not a pool: the cycle's transaction is one transaction on one connection, and the
 * daemon runs one statement at a time.
 *
 * What SQLite does by itself is done here so the stores see no difference: `?` and `@name`
 * placeholders become `$n`; a transaction takes a transaction-scoped advisory lock as it begins,
 * so writers queue as they do on SQLite's write lock (`BEGIN IMMEDIATE`), and wait at most the
 * busy timeout (`lock_timeout`) for it; BIGINT comes back as a number. Every failure of the server
 * or the way to it is a {@link StoreError} naming the URL without its password.
 *
 * Inside a transaction a write (`run`) is held back and sent with the next statement whose answer
 * the caller waits for (a read, the next savepoint, the COMMIT): each request is a round trip
 * between the threads that blocks the main thread, and many of a transaction's statements are writes.
 * Its count (`changes`) is there when read (reading it sends what is held); a held write's failure
 * fails the statement it went with, in the same transaction, which it aborts either way.
 */
import type { Secret } from '../lib/secret.js';
import { LIMIT_CODE, PostgresChannel } from './postgres-channel.js';
import { postgresFailure } from './postgres-error.js';
import { placeholderValues, postgresPlaceholders, type PostgresPlaceholders } from './postgres-placeholders.js';
import type { PostgresAsk, PostgresExec, PostgresQuery, PostgresReply } from './postgres-worker.js';
import type { SqlDatabase, SqlParameters, SqlRunResult, SqlStatement, StatementOf } from './sql-database.js';
import { StoreError } from './store-error.js';

/** Options of {@link PostgresDatabase.open}. */
export interface PostgresOptions {
  /** `postgres://user:password@host:port/database`; its `ssl…` parameters are dropped when `tls` is given. */
  url: Secret;
  /** TLS as `state.tls` says it: a CA to trust (PEM text), whether to check the server's certificate. */
  tls?: { ca?: string; rejectUnauthorized: boolean };
  connectTimeoutMs: number;
  /** The server cancels a statement after this long; the main thread waits a little longer at most. */
  statementTimeoutMs: number;
  /** How long a transaction waits for another's write lock (as SQLite's busy timeout). */
  busyTimeoutMs: number;
  /** How long the main thread may wait for any one answer now, beyond the timeouts above (the leader's lease). */
  waitLimit?: WaitLimit | undefined;
}

/**
 * A limit on how long the main thread waits for PostgreSQL that comes from outside the store: the
 * leader may wait only while its lease lets it act (`LeaderElection`). A wait cut by it throws
 * what {@link exceeded} returns (the leader steps down, and its write is fenced out).
 */
export interface WaitLimit {
  /** How long a wait may still last (ms); undefined: no limit now. */
  leftMs(): number | undefined;
  /** The error to throw for a wait cut at the limit (its owner acts on it first). */
  exceeded(): Error;
  /**
   * Asked before each wait inside a transaction: the owner may push its limit on first, with a
   * statement {@link AsideStatement} (the leader renews its lease: its timers cannot run while the
   * main thread waits through a transaction). What it throws ends the transaction.
   */
  keepUp?(aside: AsideStatement): void;
}

/**
 * A statement run at once outside the open transaction, on a connection of its own, limited as
 * any wait ({@link WaitLimit}): its rows. `@name` placeholders, as the stores write them.
 */
export type AsideStatement = (sql: string, params: Record<string, unknown>) => unknown[];

/**
 * The key of the advisory lock every transaction takes as it begins (`pg_advisory_xact_lock`):
 * "dw-state" in ASCII, a number no other program is likely to pick on the same database.
 */
const WRITE_LOCK_KEY = '7239304899918394469';

/** The least time the server lets a transaction sit idle before it ends the session (see the worker's option). */
const IDLE_IN_TRANSACTION_MIN_MS = 10_000;

/**
 * The most writes held back at once (see the file's comment): a batch is one wait of the main
 * thread, which must stay far inside one request's budget and a leader's lease even on a loaded
 * machine (256 inserts: some 40ms quiet), while the round trips it saves are already most of them.
 */
const MAX_HELD_WRITES = 256;

/** One PostgreSQL database (see the file's comment). */
export class PostgresDatabase implements SqlDatabase {
  readonly engine = 'postgres';
  /** Date.now() past which no wait may last, inside {@link within}. */
  #within: number | undefined;
  #open = true;
  /** 0 outside a transaction, 1 in one, more in its savepoints. */
  #depth = 0;
  /** The open transaction's writes not yet sent, oldest first (see the file's comment). */
  #held: { ask: PostgresQuery; write: HeldWrite }[] = [];

  private constructor(
    private readonly channel: PostgresChannel,
    /** The URL without its password or parameters, for messages. */
    readonly path: string,
    private readonly waitLimit: WaitLimit | undefined,
  ) {}

  /** A database at `options.url`; it connects on the first statement. */
  static open(options: PostgresOptions): PostgresDatabase {
    const channel = new PostgresChannel({
      url: options.tls ? withoutSslParameters(options.url.reveal()) : options.url.reveal(),
      ssl: options.tls,
      connectTimeoutMs: options.connectTimeoutMs,
      statementTimeoutMs: options.statementTimeoutMs,
      lockTimeoutMs: options.busyTimeoutMs,
      // A transaction is idle between statements while the main thread computes: far less than
      // this, even on a loaded machine. (The leader's own transactions set a shorter one: the fence.)
      idleInTransactionTimeoutMs: Math.max(options.statementTimeoutMs, IDLE_IN_TRANSACTION_MIN_MS),
    });
    return new PostgresDatabase(channel, redactedUrl(options.url.reveal()), options.waitLimit);
  }

  get open(): boolean {
    return this.#open;
  }

  get inTransaction(): boolean {
    return this.#depth > 0;
  }

  prepare<P extends SqlParameters = unknown[], R = unknown>(sql: string): StatementOf<P, R> {
    this.#requireOpen();
    return new PostgresStatement(this, postgresPlaceholders(sql)) as unknown as StatementOf<P, R>;
  }

  exec(sql: string): void {
    this.request({ op: 'exec', text: sql });
  }

  /** A transaction, or inside one a savepoint: begun, then ended as `fn` returns or throws. */
  transaction<T>(fn: () => T): T {
    this.#requireOpen();
    const depth = this.#depth;
    const name = `dw_savepoint_${depth}`;
    const [begin, end, undo] =
      depth === 0
        ? [`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})`, 'COMMIT', 'ROLLBACK']
        : [
            `SAVEPOINT ${name}`,
            `RELEASE SAVEPOINT ${name}`,
            `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`,
          ];
    this.#depth = depth + 1;
    try {
      // BEGIN is not yet "in" the transaction for the worker: a lost connection may be replaced before it.
      this.request({ op: 'exec', text: begin }, depth > 0);
      const result = notAPromise(fn());
      this.request({ op: 'exec', text: end });
      return result;
    } catch (err) {
      this.#rollback(undo);
      throw err;
    } finally {
      this.#depth = depth;
    }
  }

  /** Undoes what a failed transaction wrote; the error that failed it is the one worth throwing, not this one's. */
  #rollback(sql: string): void {
    // Writes not yet sent are all of what is undone (those before the savepoint went with it).
    this.#drop(new Error('the transaction was rolled back before this write was sent'));
    try {
      this.request({ op: 'exec', text: sql });
    } catch {
      // A connection already lost has rolled back with it.
    }
  }

  tableColumns(table: string): ReadonlySet<string> | undefined {
    const rows = this.prepare<[string], { name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = ?`,
    ).all(table);
    return rows.length === 0 ? undefined : new Set(rows.map((r) => r.name));
  }

  /** 0: autovacuum gives the space of deleted rows back for reuse by itself. */
  reclaimSpace(): number {
    return 0;
  }

  /** Nothing to do: every commit is durable on the server. */
  checkpoint(): void {}

  /** Failures here are StoreErrors already (see {@link postgresFailure}). */
  storeError(err: unknown): StoreError | undefined {
    return err instanceof StoreError ? err : undefined;
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#drop(new TypeError('The database connection is not open'));
    this.channel.close();
  }

  /**
   * Runs `fn` with every wait for the server cut at `ms` from now (a probe's answer must not wait
   * on a hanging server); a wait cut there fails as a timeout. Nested: the nearest limit holds.
   */
  within<T>(ms: number, fn: () => T): T {
    const outer = this.#within;
    const until = Date.now() + ms;
    this.#within = outer === undefined ? until : Math.min(outer, until);
    try {
      return fn();
    } finally {
      this.#within = outer;
    }
  }

  /**
   * Whether the server answers `SELECT 1` within `ms`, asked even while statements fail fast
   * after a connection failure; an answer ends that spell. For a replica about to lead: the work
   * it would start goes through this connection.
   */
  ping(ms: number): boolean {
    this.#requireOpen();
    if (this.#depth > 0) return true;
    const reply = this.channel.request({ op: 'query', text: 'SELECT 1', values: [], rowMode: undefined }, false, {
      limitMs: ms,
      force: true,
    });
    return reply.ok;
  }

  /**
   * A write of the open transaction, held back to go with the next request (see the file's
   * comment); sent now when as many as {@link MAX_HELD_WRITES} wait.
   */
  hold(ask: PostgresQuery): SqlRunResult {
    this.#requireOpen();
    const write = heldWrite(() => this.sendHeld());
    this.#held.push({ ask, write });
    if (this.#held.length >= MAX_HELD_WRITES) this.sendHeld();
    return write.result;
  }

  /** Sends the writes held back, if any; a failure of one of them is thrown here. */
  sendHeld(): void {
    if (this.#held.length > 0) this.request(undefined);
  }

  /** Fails the writes held back without sending them. */
  #drop(error: unknown): void {
    for (const h of this.#held.splice(0)) h.write.failed(error);
  }

  /**
   * Runs one request, after the writes held back, in one round trip (`undefined`: those alone);
   * `inTransaction` tells the worker it must use the connection the transaction began on.
   */
  request(
    ask: PostgresQuery | PostgresExec | undefined,
    inTransaction = this.#depth > 0,
  ): { rows: unknown[]; rowCount: number; firsts?: unknown[] } {
    this.#requireOpen();
    const held = this.#held.splice(0);
    const asks = [...held.map((h) => h.ask), ...(ask ? [ask] : [])];
    try {
      const reply = this.#request(asks.length === 1 ? asks[0]! : { op: 'batch', asks }, inTransaction);
      held.forEach((h, i) => h.write.settled(reply.counts?.[i] ?? reply.rowCount, reply.firsts?.[i]));
      return reply;
    } catch (err) {
      for (const h of held) h.write.failed(err);
      throw err;
    }
  }

  #request(
    ask: PostgresAsk,
    inTransaction: boolean,
  ): { rows: unknown[]; rowCount: number; counts?: number[]; firsts?: unknown[] } {
    if (inTransaction) this.waitLimit?.keepUp?.(this.#aside);
    const reply = this.#limited(ask, inTransaction);
    if (!reply.ok) throw postgresFailure(this.path, reply.error);
    return reply;
  }

  /** {@link AsideStatement}, through the worker's second connection. */
  readonly #aside: AsideStatement = (sql, params) => {
    const text = postgresPlaceholders(sql);
    return this.#request({ op: 'aside', text: text.text, values: placeholderValues(text, [params]) }, false).rows;
  };

  /**
   * One request, its wait cut at the nearest limit (the owner's, {@link within}'s); a wait cut
   * there throws what that limit means. Any other failure is the answer's.
   */
  #limited(ask: PostgresAsk, inTransaction: boolean): PostgresReply {
    const fromOwner = whole(this.waitLimit?.leftMs());
    const fromWithin = whole(this.#within === undefined ? undefined : this.#within - Date.now());
    const limitMs =
      fromOwner === undefined ? fromWithin : fromWithin === undefined ? fromOwner : Math.min(fromOwner, fromWithin);
    const reply = this.channel.request(ask, inTransaction, { limitMs });
    if (!reply.ok && reply.error.code === LIMIT_CODE) {
      if (limitMs === fromOwner) throw this.waitLimit!.exceeded();
      throw new StoreError(this.path, 'timeout', `the state did not answer in time (${reply.error.message})`);
    }
    return reply;
  }

  #requireOpen(): void {
    // better-sqlite3's words, so a caller (or a test) sees the same on both engines.
    if (!this.#open) throw new TypeError('The database connection is not open');
  }
}

/** A statement: its PostgreSQL text, run through the database's channel. */
class PostgresStatement implements SqlStatement {
  #raw = false;

  constructor(
    private readonly db: PostgresDatabase,
    private readonly sql: PostgresPlaceholders,
  ) {}

  run(...params: unknown[]): SqlRunResult {
    if (this.db.inTransaction) return this.db.hold(this.#ask(params));
    const { rowCount, firsts } = this.db.request(this.#ask(params));
    return { changes: rowCount, lastInsertRowid: rowId(firsts?.[0]) };
  }

  get(...params: unknown[]): unknown {
    return this.db.request(this.#ask(params)).rows[0];
  }

  all(...params: unknown[]): unknown[] {
    return this.db.request(this.#ask(params)).rows;
  }

  iterate(...params: unknown[]): IterableIterator<unknown> {
    return this.db.request(this.#ask(params)).rows[Symbol.iterator]();
  }

  raw(toggleState = true): this {
    this.#raw = toggleState;
    return this;
  }

  #ask(params: unknown[]): PostgresQuery {
    return {
      op: 'query',
      text: this.sql.text,
      values: placeholderValues(this.sql, params).map(storable),
      rowMode: this.#raw ? 'array' : undefined,
    };
  }
}

/** What a held-back write did (see {@link PostgresDatabase.hold}), known once it was sent, and how it is told. */
interface HeldWrite {
  /**
   * A plain object, as SQLite's result is: `changes` or `lastInsertRowid` read sends it (`send`)
   * if it was not yet.
   */
  result: SqlRunResult;
  settled(changes: number, first: unknown): void;
  failed(reason: unknown): void;
}

/** A {@link HeldWrite}; `send` sends it with every write held back before it. */
function heldWrite(send: () => void): HeldWrite {
  let done: SqlRunResult | undefined;
  let error: { reason: unknown } | undefined;
  const settle = (): SqlRunResult => {
    if (done === undefined && error === undefined) send();
    if (error) throw error.reason;
    return done!;
  };
  return {
    result: {
      get changes(): number {
        return settle().changes;
      },
      get lastInsertRowid(): number | bigint {
        return settle().lastInsertRowid;
      },
    },
    settled: (changes, first) => (done = { changes, lastInsertRowid: rowId(first) }),
    failed: (reason) => (error = { reason }),
  };
}

/** A returned id as SQLite gives a rowid: a number (0 when the statement returned none). */
function rowId(first: unknown): number {
  return typeof first === 'number' ? first : first === null || first === undefined ? 0 : Number(first);
}

/**
 * A value as PostgreSQL takes it. A NUL character, which SQLite stores but PostgreSQL's text
 * refuses, becomes U+FFFD (the same in every parameter, so lookups still match); undefined is NULL.
 */
function storable(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'string' && value.includes('\0')) return value.replaceAll('\0', '\uFFFD');
  return value;
}

/** A limit in whole ms (rounded down: never a wait past it). */
function whole(ms: number | undefined): number | undefined {
  return ms === undefined ? undefined : Math.floor(ms);
}

/** better-sqlite3 refuses a transaction function that returns a promise; so does this. */
function notAPromise<T>(result: T): T {
  if (typeof (result as { then?: unknown } | null)?.then === 'function') {
    throw new TypeError('Transaction function cannot return a promise');
  }
  return result;
}

/** `postgres://user@host:port/database`: where, and as whom, never the password or the parameters. */
function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : '';
    return `${u.protocol}//${user}${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(a URL that cannot be read)';
  }
}

/** The URL without the `ssl…` parameters: `state.tls` says how, and the URL's would override it in `pg`. */
export function withoutSslParameters(url: string): string {
  const u = new URL(url);
  for (const key of [...u.searchParams.keys()]) if (key.startsWith('ssl')) u.searchParams.delete(key);
  return u.href;
}
