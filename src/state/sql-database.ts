/**
 * What the stores ask of a state database, and nothing more: prepared statements that run, get
 * one row, all rows or iterate them, plain SQL for migrations, and one synchronous transaction.
 * Two engines implement it: SQLite (`sqlite-database.ts`, the default, a pass-through to
 * better-sqlite3) and PostgreSQL (`postgres-database.ts`, reached synchronously through a worker
 * thread). The cycle's lifecycle, outbox and remediation stages run in ONE synchronous
 * transaction, so the interface stays synchronous on both (see docs/architecture.md).
 *
 * The SQL the stores write is the subset both engines take: `?` or `@name` placeholders,
 * `ON CONFLICT … DO NOTHING / DO UPDATE`, `RETURNING` (a new row's id as `RETURNING id`), no engine's
 * own functions. What differs by engine (schema introspection, giving space back) is asked of the
 * database here, not written as SQL by a store.
 */

import type { StoreError } from './store-error.js';

/** The SQL dialect of a {@link SqlDatabase}. */
export type SqlEngine = 'sqlite' | 'postgres';

/**
 * What a statement's parameters are: a tuple of positional ones, or the object of named ones.
 * `{}` rather than `object`, as better-sqlite3 has it: a statement prepared without its types
 * (`prepare(sql)`) then fits whatever typed field it is stored in, positional or named.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- see above
export type SqlParameters = unknown[] | {};

/** What a write statement did. */
export interface SqlRunResult {
  /** Rows inserted, updated or deleted (0 when `ON CONFLICT DO NOTHING` kept the old row). */
  changes: number;
  /**
   * The id of the row an `INSERT … RETURNING id` wrote (with `run`, so that on PostgreSQL it is
   * held back as any write is, and sent when this is read): SQLite's rowid, which a table's
   * `INTEGER PRIMARY KEY` id is, and the `id` PostgreSQL returned. Meaningless after any other
   * statement.
   */
  lastInsertRowid: number | bigint;
}

/**
 * One prepared statement. Parameters are positional (`?`, in order) or one object of named ones
 * (`@name`); a row is an object keyed by column name, or with {@link raw} an array in column order.
 */
export interface SqlStatement<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): SqlRunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
  /** Rows as arrays in column order: cheaper than objects when a store maps columns by position. */
  raw(toggleState?: boolean): this;
}

/** The statement {@link SqlDatabase.prepare} gives for `P`: positional parameters as they are, named ones as one object. */
export type StatementOf<P extends SqlParameters, R> = P extends unknown[] ? SqlStatement<P, R> : SqlStatement<[P], R>;

/** A connection to one state database (see the file's comment). */
export interface SqlDatabase {
  readonly engine: SqlEngine;
  /** Where the database is, for messages: the file, or the PostgreSQL URL without its password. */
  readonly path: string;
  /** False once closed; any use then throws. */
  readonly open: boolean;
  /** True inside {@link transaction}. */
  readonly inTransaction: boolean;

  /** Prepares `sql`; `P` is a tuple of positional parameters, or the object of named ones. */
  prepare<P extends SqlParameters = unknown[], R = unknown>(sql: string): StatementOf<P, R>;
  /** Runs SQL text of one or more statements, without parameters (migrations). */
  exec(sql: string): void;
  /**
   * Runs `fn` in one transaction that holds the write lock from its start (SQLite's `BEGIN
   * IMMEDIATE`; on PostgreSQL a transaction-scoped advisory lock), so writers queue instead of
   * failing half-way. A throw rolls it back whole and is rethrown as it is; a nested call is a
   * savepoint. `fn` must be synchronous.
   */
  transaction<T>(fn: () => T): T;

  /** The columns of `table`; undefined when there is no such table. */
  tableColumns(table: string): ReadonlySet<string> | undefined;
  /** Gives the space of deleted rows back after a large delete; returns what it gave back, in pages (0: the engine does it by itself). */
  reclaimSpace(): number;
  /** Makes what is committed durable and self-contained at rest (SQLite folds its WAL back into the file). */
  checkpoint(): void;
  /**
   * A storage fault of this engine (disk full, locked, unreachable…) as a {@link StoreError};
   * undefined for any other error. A StoreError already comes back as it is, or as undefined, so
   * `storeError(err) ?? err` throws it unchanged.
   */
  storeError(err: unknown, action: string): StoreError | undefined;
  /** Closes the connection; calling it twice is harmless. */
  close(): void;
}
