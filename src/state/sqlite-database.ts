/**
 * The SQLite state database (the default): one file, opened with better-sqlite3. A thin
 * pass-through: `prepare` hands back better-sqlite3's own statement, so a cycle on SQLite costs
 * what it cost before the store interface existed.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { errorText } from '../lib/error-text.js';
import type { SqlDatabase, SqlParameters, StatementOf } from './sql-database.js';
import { StoreError, type StoreErrorCause } from './store-error.js';

/** Options of {@link SqliteDatabase.open}. */
export interface SqliteOptions {
  /** How long a statement waits for another connection's lock before failing (ms). */
  busyTimeoutMs: number;
  /** Refuse to create the file (see `StoreOptions.mustExist`). */
  mustExist?: boolean;
}

const FILE_MODE = 0o600;

/** What a state file deleted or replaced under the daemon means, and what to do. */
const LOST_FILE_CONSEQUENCE =
  'what it writes now goes to the old file, which is lost when it stops; a restart starts from the ' +
  'file at that path (an empty state if none: every open alert is announced again, silences and ' +
  'acknowledgements are gone). Put the file back from a backup and restart';

/** One SQLite file (see the file's comment). */
export class SqliteDatabase implements SqlDatabase {
  readonly engine = 'sqlite';

  private constructor(
    /** The better-sqlite3 connection itself, for what only SQLite has (pragmas). */
    readonly handle: Database.Database,
    /** The file, absolute (or `:memory:`). */
    readonly path: string,
    /** The file this connection opened (device and inode); undefined in memory. */
    private readonly opened: { dev: number; ino: number } | undefined,
  ) {}

  /**
   * Opens (creating if needed, with mode 0600) the file at `file` in WAL mode. Throws
   * {@link StoreError} naming the path and the cause when the directory cannot be created, the
   * file cannot be written, the disk is full, or the file is not a database.
   */
  static open(file: string, options: SqliteOptions): SqliteDatabase {
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
    let handle: Database.Database | undefined;
    try {
      handle = new Database(resolved, { timeout: options.busyTimeoutMs });
      configure(handle, resolved, inMemory);
      if (!inMemory) restrictSidecars(resolved);
    } catch (err) {
      handle?.close();
      throw sqliteStoreError(resolved, err, 'cannot open') ?? err;
    }
    const stat = inMemory ? undefined : fs.statSync(resolved);
    return new SqliteDatabase(handle, resolved, stat && { dev: stat.dev, ino: stat.ino });
  }

  /**
   * When {@link path} no longer names the file this connection writes (deleted, or another file
   * put in its place while the daemon ran): why, as a {@link StoreError}; undefined while it does.
   * Every write still succeeds, into a file nobody else can open and that is gone at the next start.
   */
  lostFile(): StoreError | undefined {
    if (this.opened === undefined) return undefined;
    let lost: string;
    try {
      const now = fs.statSync(this.path);
      if (now.dev === this.opened.dev && now.ino === this.opened.ino) return undefined;
      lost = 'replaced by another file';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
      lost = 'deleted';
    }
    return new StoreError(this.path, 'missing', `${lost} while the daemon ran: ${LOST_FILE_CONSEQUENCE}`);
  }

  get open(): boolean {
    return this.handle.open;
  }

  get inTransaction(): boolean {
    return this.handle.inTransaction;
  }

  prepare<P extends SqlParameters = unknown[], R = unknown>(sql: string): StatementOf<P, R> {
    return this.handle.prepare<P, R>(sql);
  }

  exec(sql: string): void {
    this.handle.exec(sql);
  }

  transaction<T>(fn: () => T): T {
    return this.handle.transaction(fn).immediate();
  }

  tableColumns(table: string): ReadonlySet<string> | undefined {
    const exists = this.handle.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(table);
    if (!exists) return undefined;
    const columns = this.handle.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[];
    return new Set(columns.map((c) => c.name));
  }

  reclaimSpace(): number {
    const before = this.handle.pragma('freelist_count', { simple: true }) as number;
    // Only has an effect with auto_vacuum=INCREMENTAL (set on files this code created).
    this.handle.pragma('incremental_vacuum');
    const after = this.handle.pragma('freelist_count', { simple: true }) as number;
    // Retention runs rarely and deletes a lot: fold the WAL back and shrink it to zero.
    this.checkpoint();
    return Math.max(0, before - after);
  }

  checkpoint(): void {
    this.handle.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Maps a SQLite storage fault to a {@link StoreError}; undefined when `err` is not one. */
  storeError(err: unknown, action: string): StoreError | undefined {
    return sqliteStoreError(this.path, err, action);
  }

  close(): void {
    if (this.handle.open) this.handle.close();
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
    const hint = unwritableHint(file, code, process.getuid?.());
    throw new StoreError(file, 'unwritable', `the file cannot be created or written (${errnoText(err)})${hint}`, {
      cause: err,
    });
  }
}

/**
 * What to do about a state file this user may not create or write, after a colon; empty for a
 * cause without one. A file `check` made as root beside a daemon that runs as its own user is the
 * usual case: the owner is named.
 */
export function unwritableHint(file: string, code: string | undefined, uid: number | undefined): string {
  if (code === 'EROFS') return ': the file system is read-only; set state.path to a writable place';
  if (code !== 'EACCES' && code !== 'EPERM') return '';
  const user = uid === undefined ? 'this user' : `this user (uid ${uid})`;
  let owner: number | undefined;
  try {
    owner = fs.statSync(file).uid;
  } catch {
    // Not there yet: its directory is what this user may not write.
  }
  if (owner !== undefined && owner !== uid) {
    return `: it belongs to uid ${owner}, not ${user}; chown it to the user that runs the daemon, or set state.path to a file of this user's`;
  }
  const where = owner === undefined ? `its directory ${path.dirname(file)}` : 'it';
  return `: ${user} may not write ${where}; make it this user's, or set state.path elsewhere (left out, the file goes beside the config)`;
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
  // SQLite's own 2 MB page cache: better-sqlite3 builds it with 16 MB, which holds a 10,000-app
  // state whole in malloc'd memory that is never given back (the steady peak ~8 MB lower,
  // docs/benchmarks.md); the pages it drops are read again from the OS's file cache.
  db.pragma('cache_size = -2000');
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

/** Maps a SQLite storage fault to a {@link StoreError}; undefined when `err` is not one. */
function sqliteStoreError(file: string, err: unknown, action: string): StoreError | undefined {
  const code = errnoCode(err);
  if (code === undefined) return undefined;
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
