import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import core from '../../src/state/migrations/001-core.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { Store, type StoreOptions } from '../../src/state/store.js';
import { StoreError } from '../../src/state/store-error.js';
import { unwritableHint } from '../../src/state/sqlite-database.js';
import type { Migration } from '../../src/state/migration.js';
import { sqliteHandle, STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

let dir: string;
const opened: Store[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-store-'));
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function open(file: string, options?: Parameters<typeof Store.open>[1]): Store {
  const store = Store.open(file, options);
  opened.push(store);
  return store;
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

/** A migration both engines take. */
const extra: Migration = {
  version: 99,
  name: 'extra',
  up: 'CREATE TABLE extra (id BIGINT PRIMARY KEY, v TEXT NOT NULL)',
};

describe.each(STATE_BACKENDS)('the store on $name', (backend) => {
  let state: TestState;
  /** The first migration, `core` (meta, source_health). */
  const coreOf = () => ALL_MIGRATIONS[0]!;
  /** meta and source_health alone: later migrations write rows of their own (meta.installation_id). */
  const coreOnly = (): StoreOptions => ({ migrations: [coreOf()] });

  beforeEach(() => {
    state = backend.fresh();
  });
  afterEach(() => state.cleanup());

  it('applies every migration by default and records each', () => {
    const store = state.open({ clock: new ManualClock(1_000) });
    const rows = store.db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(ALL_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: 1_000 })));
    for (const table of ['meta', 'schema_migrations', 'source_health'])
      expect(store.db.tableColumns(table)).toBeDefined();
    expect(store.schemaVersion()).toBe(ALL_MIGRATIONS.at(-1)!.version);
  });

  it('is idempotent across reopen and applies only new migrations', () => {
    const first = state.open(coreOnly());
    first.db.prepare(`INSERT INTO meta (key, value) VALUES ('kept', 'yes')`).run();
    first.close();

    const second = state.open(coreOnly());
    expect(second.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: 1 });
    second.close();

    const third = state.open({ migrations: [coreOf(), extra] });
    expect(third.schemaVersion()).toBe(99);
    expect(third.db.prepare(`SELECT value FROM meta WHERE key = 'kept'`).get()).toEqual({ value: 'yes' });
    third.db.prepare(`INSERT INTO extra (id, v) VALUES (1, 'x')`).run();
  });

  it('refuses a database written by a newer version, naming both versions', () => {
    state.open({ migrations: [coreOf(), extra] }).close();
    const err = catchError(() => state.open(coreOnly()));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('newer-schema');
    expect((err as StoreError).message).toContain(
      backend.engine === 'sqlite' ? state.config.path! : 'postgres://watchdog@127.0.0.1:',
    );
    expect((err as StoreError).message).toMatch(/schema version 99 is newer .*\(1\)/);
    // A rollback: the way back is the state as it was before the newer version migrated it.
    expect((err as StoreError).message).toContain('or point state.');
    expect((err as StoreError).message).toContain('at a copy of the state from before that version migrated it');
  });

  it('rolls a failing migration back whole and names it', () => {
    const broken: Migration = {
      version: 2,
      name: 'broken',
      up: 'CREATE TABLE half (id INTEGER); INSERT INTO nowhere VALUES (1);',
    };
    const err = catchError(() => state.open({ migrations: [coreOf(), broken] }));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('migration');
    expect((err as StoreError).message).toMatch(/migration 2 \(broken\) failed and was rolled back: .*nowhere/);
    const store = state.open(coreOnly());
    expect(store.db.tableColumns('half')).toBeUndefined();
    expect(store.schemaVersion()).toBe(1);
  });

  it('warns when a recorded migration has another name than the code', () => {
    state.open({ migrations: [coreOf(), extra] }).close();
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    state.open({ migrations: [coreOf(), { ...extra, name: 'renamed' }], logger });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({
        msg: 'state migration recorded under another name',
        version: 99,
        recorded: 'extra',
        expected: 'renamed',
      }),
    ]);
  });

  it('refuses a migration list out of order', () => {
    expect(() => state.open({ migrations: [extra, coreOf()] })).toThrow(/strictly increasing/);
  });

  it('commits a transaction and returns its result', () => {
    const store = state.open(coreOnly());
    const n = store.transaction(() => {
      store.db.prepare(`INSERT INTO meta (key, value) VALUES ('a', '1')`).run();
      return 42;
    });
    expect(n).toBe(42);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM meta').get()).toEqual({ n: 1 });
  });

  it('rolls everything back on a throw and rethrows the caller error unchanged', () => {
    const store = state.open(coreOnly());
    const boom = new Error('boom');
    const err = catchError(() =>
      store.transaction(() => {
        store.db.prepare(`INSERT INTO meta (key, value) VALUES ('a', '1')`).run();
        store.db.prepare(`INSERT INTO source_health (job) VALUES ('runs')`).run();
        throw boom;
      }),
    );
    expect(err).toBe(boom);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM meta').get()).toEqual({ n: 0 });
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM source_health').get()).toEqual({ n: 0 });
  });

  it('makes a nested transaction a savepoint: its throw undoes it alone', () => {
    const store = state.open(coreOnly());
    store.transaction(() => {
      store.setMeta('outer', '1');
      expect(() =>
        store.transaction(() => {
          store.setMeta('inner', '1');
          throw new Error('inner');
        }),
      ).toThrow('inner');
      expect(store.db.inTransaction).toBe(true);
    });
    expect([store.getMeta('outer'), store.getMeta('inner')]).toEqual(['1', undefined]);
  });

  it('refuses a transaction function that returns a promise, writing nothing', () => {
    const store = state.open(coreOnly());
    expect(() =>
      store.transaction(() => {
        store.setMeta('a', '1');
        return Promise.resolve();
      }),
    ).toThrow(/cannot return a promise/);
    expect(store.getMeta('a')).toBeUndefined();
  });

  it.each([
    ['a row inserted', `INSERT INTO meta (key, value) VALUES ('k', 'v')`, 1],
    [
      'a row kept by ON CONFLICT DO NOTHING',
      `INSERT INTO meta (key, value) VALUES ('held', 'v') ON CONFLICT DO NOTHING`,
      0,
    ],
    ['rows updated', `UPDATE meta SET value = 'w'`, 1],
    ['nothing deleted', `DELETE FROM meta WHERE key = 'none'`, 0],
  ])('counts the changes of a statement: %s', (_what, sql, changes) => {
    const store = state.open(coreOnly());
    store.setMeta('held', 'x');
    expect(store.db.prepare(sql).run().changes).toBe(changes);
  });

  it('binds @names (the same name twice one value) and gives rows as arrays with raw()', () => {
    const store = state.open(coreOnly());
    const insert = store.db.prepare<{ k: string; v: string }>(
      'INSERT INTO meta (key, value) VALUES (@k, @v) ON CONFLICT (key) DO UPDATE SET value = @v || @v',
    );
    insert.run({ k: 'a', v: 'x' });
    insert.run({ k: 'a', v: 'y' });
    expect(store.db.prepare('SELECT key, value FROM meta').raw(true).all()).toEqual([['a', 'yy']]);
    expect([...store.db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM meta').iterate()]).toEqual([{ n: 1 }]);
  });

  it('keeps a NUL character out of the database without losing the rest of the text', () => {
    const store = state.open(coreOnly());
    store.setMeta('k', 'before\0after');
    expect(store.getMeta('k')).toMatch(/^before(\0|\uFFFD)after$/);
    // Looked up by the same text, it is found whatever the engine stored.
    expect(store.db.prepare('SELECT key FROM meta WHERE value = ?').get('before\0after')).toEqual({ key: 'k' });
  });

  describe('the write guard', () => {
    it('runs first in each transaction, inside it, once however nested', () => {
      const seen: boolean[] = [];
      const store = state.open({
        ...coreOnly(),
        writeGuard: (db) => void seen.push(db.inTransaction),
      });
      store.transaction(() => store.transaction(() => store.setMeta('a', '1')));
      store.transaction(() => store.setMeta('b', '1'));
      expect(seen).toEqual([true, true]);
    });

    it('a guard that throws (a deposed leader) rolls the transaction back and its error passes through', () => {
      let epoch = 1;
      const store = state.open({
        ...coreOnly(),
        writeGuard: (db) => {
          // As the fencing check will read the lease row in the same transaction.
          const row = db.prepare<[], { value: string }>(`SELECT value FROM meta WHERE key = 'epoch'`).get();
          if (row && Number(row.value) !== epoch) throw new Error(`epoch ${epoch} is stale`);
        },
      });
      store.transaction(() => store.setMeta('epoch', '1'));
      store.transaction(() => store.setMeta('written', 'by 1'));
      epoch = 2;
      expect(() => store.transaction(() => store.setMeta('written', 'by stale'))).toThrow('epoch 2 is stale');
      expect(store.getMeta('written')).toBe('by 1');
    });
  });

  it('close is idempotent; the database is not open after it', () => {
    const store = state.open();
    store.close();
    expect(() => store.close()).not.toThrow();
    expect(store.db.open).toBe(false);
    expect(() => store.db.prepare('SELECT 1').get()).toThrow(/not open/);
  });
});

describe('Store.open (SQLite)', () => {
  it('tells when its file is deleted or replaced under it, though every write still succeeds', () => {
    const file = path.join(dir, 'state.db');
    const store = open(file);
    expect(store.lostFile()).toBeUndefined();
    const other = path.join(dir, 'other.db');
    open(other).close();
    fs.renameSync(other, file);
    expect(store.lostFile()?.message).toMatch(
      /^state database .+state\.db: replaced by another file while the daemon ran: /,
    );
    fs.rmSync(file);
    store.setMeta('still', 'writes');
    expect(store.lostFile()).toMatchObject({ reason: 'missing' });
    expect(store.lostFile()?.message).toMatch(
      /state\.db: deleted while the daemon ran: .*a restart starts from the file/,
    );
    expect(open(':memory:').lostFile()).toBeUndefined();
  });

  it('creates the directory and the file with mode 0600, WAL, foreign keys, NORMAL sync and a 2 MB cache', () => {
    const file = path.join(dir, 'nested', 'deeper', 'state.db');
    const store = open(file);
    expect(store.path).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(sqliteHandle(store).pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqliteHandle(store).pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqliteHandle(store).pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(sqliteHandle(store).pragma('auto_vacuum', { simple: true })).toBe(2); // INCREMENTAL
    expect(sqliteHandle(store).pragma('cache_size', { simple: true })).toBe(-2000); // kB, SQLite's own default
    store.db.prepare(`INSERT INTO meta (key, value) VALUES ('k', 'v')`).run();
    for (const suffix of ['-wal', '-shm']) {
      if (fs.existsSync(file + suffix)) expect(fs.statSync(file + suffix).mode & 0o777).toBe(0o600);
    }
  });

  it('tightens a pre-existing file with a loose mode to 0600', () => {
    const file = path.join(dir, 'state.db');
    fs.writeFileSync(file, '', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    open(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('gives a clear StoreError when the file is not a database', () => {
    const file = path.join(dir, 'notes.txt');
    fs.writeFileSync(file, 'this is not a database, it is a shopping list\n'.repeat(200));
    const err = catchError(() => open(file));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('not-a-database');
    expect((err as StoreError).message).toContain(file);
    expect((err as StoreError).message).toContain('not a SQLite database');
  });

  it('gives a clear StoreError when the directory cannot be created', () => {
    const blocker = path.join(dir, 'a-file');
    fs.writeFileSync(blocker, '');
    const file = path.join(blocker, 'sub', 'state.db');
    const err = catchError(() => open(file));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('directory');
    expect((err as StoreError).message).toContain(file);
    expect((err as StoreError).message).toMatch(/directory .*a-file\/sub is missing and cannot be created \(ENOTDIR/);
  });

  it('gives a clear StoreError when the path is not a writable file', () => {
    const file = path.join(dir, 'is-a-dir');
    fs.mkdirSync(file);
    const err = catchError(() => open(file));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('unwritable');
    expect((err as StoreError).message).toMatch(/is-a-dir: the file cannot be created or written \(EISDIR/);
  });

  // Root ignores directory permissions, so this case can only be shown as an ordinary user.
  it.skipIf(process.getuid?.() === 0)('gives a clear StoreError when the directory is not writable', () => {
    const ro = path.join(dir, 'read-only');
    fs.mkdirSync(ro, { mode: 0o500 });
    try {
      const err = catchError(() => open(path.join(ro, 'state.db')));
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).reason).toBe('unwritable');
      expect((err as StoreError).message).toMatch(/EACCES.*may not write its directory .*read-only; make it/);
    } finally {
      fs.chmodSync(ro, 0o700);
    }
  });

  // As root (which writes anything) the cause is given as the open would have met it.
  it('says what to do about a state file this user may not write, naming its owner', () => {
    const file = path.join(dir, 'state.db');
    fs.writeFileSync(file, '');
    const owner = fs.statSync(file).uid;
    expect(unwritableHint(file, 'EACCES', owner + 1)).toBe(
      `: it belongs to uid ${owner}, not this user (uid ${owner + 1}); chown it to the user that runs the daemon, ` +
        "or set state.path to a file of this user's",
    );
    expect(unwritableHint(path.join(dir, 'gone', 'state.db'), 'EACCES', owner)).toBe(
      `: this user (uid ${owner}) may not write its directory ${path.join(dir, 'gone')}; make it this user's, ` +
        'or set state.path elsewhere (left out, the file goes beside the config)',
    );
    expect(unwritableHint(file, 'EROFS', owner)).toBe(
      ': the file system is read-only; set state.path to a writable place',
    );
    expect(unwritableHint(file, 'EISDIR', owner)).toBe('');
  });

  it('reports a lock held by another connection as locked', () => {
    const file = path.join(dir, 'state.db');
    // Another process holding the write lock while this one needs to migrate.
    const other = new Database(file);
    try {
      other.pragma('journal_mode = WAL');
      other.exec('BEGIN IMMEDIATE');
      other.exec('CREATE TABLE holder (x)');
      const err = catchError(() => open(file, { busyTimeoutMs: 20 }));
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).reason).toBe('locked');
      expect((err as StoreError).message).toContain('locked by another process');
    } finally {
      other.close();
    }
  });

  it('reports a full disk in a transaction as a StoreError and keeps what was committed before', () => {
    const store = open(path.join(dir, 'state.db'), { migrations: [core] });
    store.db.prepare(`INSERT INTO meta (key, value) VALUES ('before', 'x')`).run();
    // A page cap stands in for a full disk: SQLite answers SQLITE_FULL exactly as it would.
    const pages = sqliteHandle(store).pragma('page_count', { simple: true }) as number;
    sqliteHandle(store).pragma(`max_page_count = ${pages + 1}`);
    const err = catchError(() =>
      store.transaction(() => {
        const insert = store.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
        for (let i = 0; i < 200; i += 1) insert.run(`k${i}`, 'x'.repeat(1000));
      }),
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('disk-full');
    expect((err as StoreError).message).toContain(store.path);
    expect(store.db.prepare('SELECT key FROM meta').all()).toEqual([{ key: 'before' }]);
  });
});
