import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import type { Clock } from '../lib/clock.js';
import { systemClock } from '../lib/clock.js';
import { migrationSql, type Migration } from './migration.js';
import { ALL_MIGRATIONS } from './migrations/index.js';
import { PostgresDatabase, type PostgresOptions, type WaitLimit } from './postgres-database.js';
import { prepareAll, sql, type Prepared } from './prepare-all.js';
import type { SqlDatabase } from './sql-database.js';
import { sqlDialect, type SqlDialect } from './sql-dialect.js';
import { SqliteDatabase } from './sqlite-database.js';
import { StoreError } from './store-error.js';

/** Options of {@link Store.open} and {@link Store.openPostgres}. */
export interface StoreOptions {
  logger?: Logger;
  /** The schema steps to apply; every migration of the project by default. */
  migrations?: readonly Migration[];
  /** How long a statement waits for another connection's lock before failing (ms). Default 5000. */
  busyTimeoutMs?: number;
  /** Stamps `schema_migrations.applied_at`. */
  clock?: Clock;
  /**
   * Refuse to create the file (or, on PostgreSQL, to start on a database without the daemon's
   * tables): for the commands that only read or annotate a state the daemon made, where a
   * mistyped `state.path` must not open a new empty database and report "no alerts".
   */
  mustExist?: boolean;
  /**
   * Refuse a state an older deploy-watchdog wrote rather than migrate it: for the commands that
   * read or annotate a state. A migration is one way (the older release refuses the state after),
   * so only the daemon (`run`, `check`) and `migrate-state` take that step.
   */
  keepSchema?: boolean;
  /**
   * Runs on the store before its first pending migration, and throws to leave the schema as it is:
   * the daemon claims its runner lease here, so one started while an older daemon still works on
   * the state is refused before it migrates the state under it.
   */
  beforeMigrating?: (store: Store) => void;
  /**
   * Runs first in every transaction of {@link Store.transaction}, inside it: a throw rolls the
   * transaction back before anything is written and is rethrown as it is. The seam for a fencing
   * check on PostgreSQL, where several replicas share one state and only the leader may write:
   * a shared advisory lock, then `SELECT … FROM leader_lease WHERE epoch = ?`, throwing when the
   * epoch is no longer this replica's, makes a deposed leader's write fail in the same transaction
   * (its lock also holds off a takeover until the write commits). Migrations do not run it.
   */
  writeGuard?: WriteGuard;
  /** PostgreSQL: how long the main thread may still wait for an answer, from outside the store (the leader's lease). */
  waitLimit?: WaitLimit;
}

/** See {@link StoreOptions.writeGuard}. */
export type WriteGuard = (db: SqlDatabase) => void;

/** Where a PostgreSQL state is and how to reach it (see {@link PostgresOptions}). */
export type PostgresTarget = Omit<PostgresOptions, 'busyTimeoutMs' | 'waitLimit'>;

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/** Where the migrations applied are recorded. */
function migrationsTable(d: SqlDialect): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at ${d.int64} NOT NULL
  )${d.strict}`;
}

/** The statements of the `meta` table: facts of the state, by key. */
const META_SQL = {
  get: sql<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
  set: sql<[string, string]>(
    'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  ),
  remove: sql<[string]>('DELETE FROM meta WHERE key = ?'),
};

/**
 * The daemon's state database: alerts, events, the outbox, silences, remediation audit. A SQLite
 * file by default ({@link Store.open}): created with mode 0600 (it holds alert text and labels, and
 * nothing else should read it), in WAL mode. Opening applies pending migrations, each in its own
 * transaction. Modules that own their tables use `db` (the {@link SqlDatabase} both engines
 * implement) directly and wrap multi-statement changes in {@link Store.transaction}.
 */
export class Store {
  #meta: Prepared<typeof META_SQL> | undefined;

  private constructor(
    readonly db: SqlDatabase,
    private readonly writeGuard: WriteGuard | undefined,
  ) {}

  /** Where the state is, for messages: the file, or the PostgreSQL URL without its password. */
  get path(): string {
    return this.db.path;
  }

  /**
   * A small fact of the `meta` table (migration 001): one value by key, or undefined. The stages
   * keep their few facts there (a job's suspect cycles, the runner lease, the readiness probe);
   * this is the one place that reads and writes the table.
   */
  getMeta(key: string): string | undefined {
    return this.#metaStatements().get.get(key)?.value;
  }

  /** Sets a fact of the `meta` table; undefined deletes it. */
  setMeta(key: string, value: string | undefined): void {
    const m = this.#metaStatements();
    if (value === undefined) m.remove.run(key);
    else m.set.run(key, value);
  }

  #metaStatements(): Prepared<typeof META_SQL> {
    return (this.#meta ??= prepareAll(this.db, META_SQL));
  }

  /**
   * Opens (creating if needed) the SQLite database at `file` and brings its schema up to date.
   * Throws {@link StoreError} naming the path and the cause when the directory cannot be created,
   * the file cannot be written, the disk is full, the file is not a database, another process
   * holds the lock, or the file was written by a newer version.
   */
  static open(file: string, options: StoreOptions = {}): Store {
    const db = SqliteDatabase.open(file, {
      busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      mustExist: options.mustExist,
    });
    return Store.#migrated(db, options);
  }

  /**
   * Opens the PostgreSQL database `target.url` names and brings its schema up to date (the same
   * migrations, in PostgreSQL's dialect). Throws {@link StoreError} naming the URL without its
   * password and the cause when the server cannot be reached, refuses the login or the TLS
   * connection, the database does not exist, or it was migrated by a newer version.
   */
  static openPostgres(target: PostgresTarget, options: StoreOptions = {}): Store {
    const db = PostgresDatabase.open({
      ...target,
      busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
      waitLimit: options.waitLimit,
    });
    return Store.#migrated(db, options);
  }

  /**
   * A store over `db` with its schema brought up to date; `db` is closed when that fails. A
   * PostgreSQL database that must exist must hold the daemon's tables (SQLite's file was checked).
   */
  static #migrated(db: SqlDatabase, options: StoreOptions): Store {
    const store = new Store(db, options.writeGuard);
    try {
      if (options.mustExist && db.engine === 'postgres' && !db.tableColumns('schema_migrations')) {
        throw new StoreError(
          db.path,
          'missing',
          'holds no deploy-watchdog state; is state.url right? (the daemon creates its tables when it first starts)',
        );
      }
      migrate(store, options);
    } catch (err) {
      db.close();
      throw db.storeError(err, 'cannot open') ?? err;
    }
    return store;
  }

  /**
   * Runs `fn` inside one transaction that holds the write lock from its start (SQLite's `BEGIN
   * IMMEDIATE`) and returns its result; any throw rolls the whole transaction back, so nothing is
   * half-written. Holding the lock up front makes two writers queue on the busy timeout instead of
   * failing mid-transaction on a lock upgrade. Nested calls become savepoints. `fn` must be
   * synchronous (a promise is refused). Storage faults (disk full, locked, I/O, an unreachable
   * server) surface as {@link StoreError}; the caller's own errors pass through unchanged. The
   * write guard, when there is one, runs first (once, in the outermost transaction).
   */
  transaction<T>(fn: () => T): T {
    const guard = this.db.inTransaction ? undefined : this.writeGuard;
    try {
      return this.db.transaction(
        guard
          ? () => {
              guard(this.db);
              return fn();
            }
          : fn,
      );
    } catch (err) {
      throw this.db.storeError(err, 'write failed') ?? err;
    }
  }

  /**
   * Runs `fn` with every wait for a PostgreSQL server cut at `ms` from now (a probe must not hang
   * on a server that does not answer); SQLite's calls wait on no server, and run as they are.
   */
  within<T>(ms: number, fn: () => T): T {
    return this.db instanceof PostgresDatabase ? this.db.within(ms, fn) : fn();
  }

  /**
   * Whether the state answers now, within `ms` (PostgreSQL: `SELECT 1` on the store's own
   * connection, even while its statements fail fast after a failure; SQLite: always).
   */
  ping(ms: number): boolean {
    return this.db instanceof PostgresDatabase ? this.db.ping(ms) : true;
  }

  /** Why the state file is no longer at its path (SQLite: deleted or replaced under the daemon), or undefined. */
  lostFile(): StoreError | undefined {
    return this.db instanceof SqliteDatabase ? this.db.lostFile() : undefined;
  }

  /** The highest applied schema version. */
  schemaVersion(): number {
    return currentVersion(this.db);
  }

  /** Closes the connection (checkpointing the WAL); calling it twice is harmless, as on both engines. */
  close(): void {
    this.db.close();
  }
}

function checkMigrationList(migrations: readonly Migration[]): void {
  let previous = 0;
  for (const m of migrations) {
    // A programming error, not an operator's: thrown as is.
    if (!Number.isInteger(m.version) || m.version <= previous) {
      throw new Error(
        `migrations must have strictly increasing positive integer versions: ${m.version} (${m.name}) follows ${previous}`,
      );
    }
    previous = m.version;
  }
}

function currentVersion(db: SqlDatabase): number {
  const row = db.prepare<[], { v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations').get();
  return row?.v ?? 0;
}

/** Brings the schema of `store` up to date: `options.migrations` (every migration by default) not yet applied. */
function migrate(store: Store, options: StoreOptions): void {
  const { db } = store;
  const { clock = systemClock, logger = silentLogger, migrations = ALL_MIGRATIONS } = options;
  checkMigrationList(migrations);
  // In a transaction: on PostgreSQL, two processes creating it at once would otherwise clash.
  const dialect = sqlDialect(db.engine);
  db.transaction(() => db.exec(migrationsTable(dialect)));
  const known = migrations.at(-1)?.version ?? 0;
  const found = currentVersion(db);
  if (found > known) {
    throw new StoreError(
      db.path,
      'newer-schema',
      `schema version ${found} is newer than this deploy-watchdog knows (${known}); ` +
        `it was written by a newer version: run that version, or point state.${db.engine === 'sqlite' ? 'path' : 'url'} ` +
        'at a copy of the state from before that version migrated it (or at another database)',
    );
  }
  if (options.keepSchema && found > 0 && found < known) {
    throw new StoreError(
      db.path,
      'older-schema',
      `schema version ${found} is older than this deploy-watchdog's (${known}): \`deploy-watchdog run\` of this ` +
        'version migrates it when it starts, for good (older versions cannot open it after); until then, use the deploy-watchdog that runs on it',
    );
  }
  // A recorded name that differs from the code's means the file was migrated by a diverging build
  // (a renumbered migration): worth a loud line, though the schema may well be fine.
  const byVersion = new Map(migrations.map((m) => [m.version, m.name]));
  for (const row of db
    .prepare<[], { version: number; name: string }>('SELECT version, name FROM schema_migrations')
    .all()) {
    const expected = byVersion.get(row.version);
    if (expected !== undefined && expected !== row.name) {
      logger.warn(
        { version: row.version, recorded: row.name, expected },
        'state migration recorded under another name',
      );
    }
  }
  // A new state (version 0) has no `meta` yet, and nobody working on it.
  if (found > 0 && found < known) options.beforeMigrating?.(store);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  for (const m of migrations) {
    if (m.version <= found) continue;
    const step = () =>
      db.transaction(() => {
        // Checked again under the write lock: another process may have migrated meanwhile.
        if (applied.get(m.version)) return false;
        db.exec(migrationSql(m, dialect));
        record.run(m.version, m.name, clock.now());
        return true;
      });
    try {
      if (step()) logger.info({ version: m.version, migration: m.name }, 'applied state migration');
    } catch (err) {
      const storage = db.storeError(err, `migration ${m.version} (${m.name}) failed`);
      if (storage) throw storage;
      throw new StoreError(
        db.path,
        'migration',
        `migration ${m.version} (${m.name}) failed and was rolled back: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}
