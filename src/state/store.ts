import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import type { Clock } from '../lib/clock.js';
import { systemClock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { Migration } from './migration.js';
import { ALL_MIGRATIONS } from './migrations/index.js';
import { StoreError, type StoreErrorCause } from './store-error.js';

/** Options of {@link Store.open}. */
export interface StoreOptions {
  logger?: Logger;
  /** The schema steps to apply; every migration of the project by default. */
  migrations?: readonly Migration[];
  /** How long a statement waits for another connection's lock before failing (ms). Default 5000. */
  busyTimeoutMs?: number;
  /** Stamps `schema_migrations.applied_at`. */
  clock?: Clock;
  /**
   * Refuse to create the file: for the commands that only read or annotate a state the daemon
   * made, where a mistyped `state.path` must not open a new empty database and report "no alerts".
   */
  mustExist?: boolean;
}

const FILE_MODE = 0o600;
const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

/**
 * The daemon's one SQLite file: alerts, events, the outbox, silences, remediation audit.
 * Opening it creates it with mode 0600 (it holds alert text and labels, and nothing else should
 * read it), switches it to WAL, and applies pending migrations, each in its own transaction.
 * Modules that own their tables use `db` directly and wrap multi-statement changes in
 * {@link Store.transaction}.
 */
export class Store {
  #closed = false;
  #meta:
    | {
        get: Database.Statement<[string], { value: string }>;
        set: Database.Statement<[string, string]>;
        remove: Database.Statement<[string]>;
      }
    | undefined;

  private constructor(
    readonly db: Database.Database,
    readonly path: string,
  ) {}

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

  #metaStatements() {
    this.#meta ??= {
      get: this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      set: this.db.prepare<[string, string]>(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      remove: this.db.prepare<[string]>('DELETE FROM meta WHERE key = ?'),
    };
    return this.#meta;
  }

  /**
   * Opens (creating if needed) the database at `file` and brings its schema up to date.
   * Throws {@link StoreError} naming the path and the cause when the directory cannot be created,
   * the file cannot be written, the disk is full, the file is not a database, another process
   * holds the lock, or the file was written by a newer version.
   */
  static open(file: string, options: StoreOptions = {}): Store {
    const logger = options.logger ?? silentLogger;
    const migrations = options.migrations ?? ALL_MIGRATIONS;
    const clock = options.clock ?? systemClock;
    checkMigrationList(migrations);

    const inMemory = file === ':memory:';
    const resolved = inMemory ? file : path.resolve(file);
    if (!inMemory && options.mustExist && !fs.existsSync(resolved)) {
      throw new StoreError(
        resolved,
        'missing',
        'does not exist; is state.path right? (the daemon creates the file when it first starts)',
      );
    }
    if (!inMemory) prepareFile(resolved);

    let db: Database.Database;
    try {
      db = new Database(resolved, { timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    } catch (err) {
      throw storeErrorOf(resolved, err, 'cannot open') ?? err;
    }
    try {
      configure(db, resolved, inMemory);
      migrate(db, resolved, migrations, clock, logger);
      if (!inMemory) restrictSidecars(resolved);
    } catch (err) {
      db.close();
      if (err instanceof StoreError) throw err;
      throw storeErrorOf(resolved, err, 'cannot open') ?? err;
    }
    return new Store(db, resolved);
  }

  /**
   * Runs `fn` inside `BEGIN IMMEDIATE … COMMIT` and returns its result; any throw rolls the whole
   * transaction back, so nothing is half-written. IMMEDIATE takes the write lock up front, so two
   * writers queue on the busy timeout instead of failing mid-transaction on a lock upgrade.
   * Nested calls become savepoints. `fn` must be synchronous (better-sqlite3 refuses a promise).
   * Storage faults (disk full, locked, I/O) surface as {@link StoreError}; the caller's own errors
   * pass through unchanged.
   */
  transaction<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn).immediate();
    } catch (err) {
      throw storeErrorOf(this.path, err, 'write failed') ?? err;
    }
  }

  /** Folds the WAL back into the file, so the database is one self-contained file at rest. */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** The highest applied schema version. */
  schemaVersion(): number {
    return currentVersion(this.db);
  }

  /** Closes the connection (checkpointing the WAL); calling it twice is harmless. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
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

/**
 * Creates the directory and an empty file with mode 0600 before SQLite sees it: SQLite would
 * create the file with the umask's mode (often world-readable), and it creates -wal/-shm with the
 * mode of the main file, so getting the main file right covers all three.
 */
function prepareFile(file: string): void {
  const dir = path.dirname(file);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new StoreError(file, 'directory', `directory ${dir} is missing and cannot be created (${errnoText(err)})`, {
      cause: err,
    });
  }
  try {
    fs.closeSync(fs.openSync(file, 'a', FILE_MODE));
    fs.chmodSync(file, FILE_MODE);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      throw new StoreError(file, 'disk-full', `the disk is full (${errnoText(err)})`, { cause: err });
    }
    throw new StoreError(file, 'unwritable', `the file cannot be created or written (${errnoText(err)})`, {
      cause: err,
    });
  }
}

function configure(db: Database.Database, file: string, inMemory: boolean): void {
  // Must come before the first table exists; lets retention give pages back with
  // `PRAGMA incremental_vacuum` instead of a full VACUUM that rewrites the whole file.
  db.pragma('auto_vacuum = INCREMENTAL');
  if (!inMemory) {
    // WAL: readers (the CLI's `alerts` command, /metrics) never block the daemon's writer.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') {
      throw new StoreError(file, 'io', `cannot switch to WAL journal mode (got ${String(mode)})`);
    }
  }
  // NORMAL in WAL mode syncs at checkpoints, not at every commit: a commit survives a crash of the
  // process, and a power loss can at worst lose the last few commits, never corrupt the file. The
  // daemon re-derives its state from the API every cycle, so that trade is worth the fsyncs saved.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
}

function currentVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

function migrate(
  db: Database.Database,
  file: string,
  migrations: readonly Migration[],
  clock: Clock,
  logger: Logger,
): void {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const known = migrations.at(-1)?.version ?? 0;
  const found = currentVersion(db);
  if (found > known) {
    throw new StoreError(
      file,
      'newer-schema',
      `schema version ${found} is newer than this deploy-watchdog knows (${known}); ` +
        'it was written by a newer version: upgrade deploy-watchdog or point state.path at another file',
    );
  }
  // A recorded name that differs from the code's means the file was migrated by a diverging build
  // (a renumbered migration): worth a loud line, though the schema may well be fine.
  const byVersion = new Map(migrations.map((m) => [m.version, m.name]));
  for (const row of db.prepare('SELECT version, name FROM schema_migrations').all() as {
    version: number;
    name: string;
  }[]) {
    const expected = byVersion.get(row.version);
    if (expected !== undefined && expected !== row.name) {
      logger.warn(
        { version: row.version, recorded: row.name, expected },
        'state migration recorded under another name',
      );
    }
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  for (const m of migrations) {
    if (m.version <= found) continue;
    const step = db.transaction(() => {
      // Checked again under the write lock: another process may have migrated meanwhile.
      if (applied.get(m.version)) return false;
      db.exec(m.up);
      record.run(m.version, m.name, clock.now());
      return true;
    });
    try {
      if (step.immediate()) logger.info({ version: m.version, migration: m.name }, 'applied state migration');
    } catch (err) {
      const storage = storeErrorOf(file, err, `migration ${m.version} (${m.name}) failed`);
      if (storage) throw storage;
      throw new StoreError(
        file,
        'migration',
        `migration ${m.version} (${m.name}) failed and was rolled back: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

/** Keeps -wal and -shm at 0600 too, in case they pre-existed with a looser mode. */
function restrictSidecars(file: string): void {
  for (const suffix of ['-wal', '-shm']) {
    try {
      fs.chmodSync(file + suffix, FILE_MODE);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
  }
}

/** Maps a storage fault to a {@link StoreError}; undefined when `err` is not one. */
function storeErrorOf(file: string, err: unknown, action: string): StoreError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const reasonOf = (): [StoreErrorCause, string] | undefined => {
    if (code === 'SQLITE_FULL' || code === 'ENOSPC') return ['disk-full', 'the disk is full'];
    if (code === 'SQLITE_NOTADB') return ['not-a-database', 'the file is not a SQLite database'];
    if (code.startsWith('SQLITE_CORRUPT')) return ['corrupt', 'the database file is corrupt'];
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
      return ['locked', 'the database is locked by another process (is another deploy-watchdog running on it?)'];
    if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM')
      return ['unwritable', 'the file cannot be opened for writing'];
    if (code.startsWith('SQLITE_IOERR')) return ['io', `an I/O error occurred (${code})`];
    return undefined;
  };
  const r = reasonOf();
  if (!r) return undefined;
  return new StoreError(file, r[0], `${action}: ${r[1]} (${(err as Error).message})`, { cause: err });
}

function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function errnoText(err: unknown): string {
  const code = errnoCode(err);
  const msg = errorText(err);
  return code ? `${code}: ${msg.replace(/^[A-Z]+: /, '')}` : msg;
}
