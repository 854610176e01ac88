import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import core from '../../src/state/migrations/001-core.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { Store } from '../../src/state/store.js';
import { StoreError } from '../../src/state/store-error.js';
import type { Migration } from '../../src/state/migration.js';
import { sqliteHandle } from '../helpers/state-backends.js';

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

const extra: Migration = {
  version: 99,
  name: 'extra',
  up: 'CREATE TABLE extra (id INTEGER PRIMARY KEY, v TEXT NOT NULL)',
};

describe('Store.open', () => {
  it('creates the directory and the file with mode 0600, WAL, foreign keys and NORMAL sync', () => {
    const file = path.join(dir, 'nested', 'deeper', 'state.db');
    const store = open(file);
    expect(store.path).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(sqliteHandle(store).pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqliteHandle(store).pragma('foreign_keys', { simple: true })).toBe(1);
    expect(sqliteHandle(store).pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(sqliteHandle(store).pragma('auto_vacuum', { simple: true })).toBe(2); // INCREMENTAL
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

  it('applies every migration by default and records each', () => {
    const store = open(path.join(dir, 'state.db'), { clock: new ManualClock(1_000) });
    const rows = store.db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(ALL_MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: 1_000 })));
    const tables = store.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
      .all()
      .map((r) => (r as { name: string }).name);
    expect(tables).toEqual(expect.arrayContaining(['meta', 'schema_migrations', 'source_health']));
    expect(store.schemaVersion()).toBe(ALL_MIGRATIONS.at(-1)!.version);
  });

  it('is idempotent across reopen and applies only new migrations', () => {
    const file = path.join(dir, 'state.db');
    const first = open(file, { migrations: [core] });
    first.db.prepare(`INSERT INTO meta (key, value) VALUES ('kept', 'yes')`).run();
    first.close();

    const second = open(file, { migrations: [core] });
    expect(second.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: 1 });
    second.close();

    const third = open(file, { migrations: [core, extra] });
    expect(third.schemaVersion()).toBe(99);
    expect(third.db.prepare(`SELECT value FROM meta WHERE key = 'kept'`).get()).toEqual({ value: 'yes' });
    third.db.prepare(`INSERT INTO extra (v) VALUES ('x')`).run();
  });

  it('refuses a database written by a newer version, naming both versions', () => {
    const file = path.join(dir, 'state.db');
    open(file, { migrations: [core, extra] }).close();
    const err = catchError(() => open(file, { migrations: [core] }));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('newer-schema');
    expect((err as StoreError).message).toContain(file);
    expect((err as StoreError).message).toMatch(/schema version 99 is newer .*\(1\)/);
  });

  it('rolls a failing migration back whole and names it', () => {
    const file = path.join(dir, 'state.db');
    const broken: Migration = {
      version: 2,
      name: 'broken',
      up: 'CREATE TABLE half (id INTEGER); INSERT INTO nowhere VALUES (1);',
    };
    const err = catchError(() => open(file, { migrations: [core, broken] }));
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).reason).toBe('migration');
    expect((err as StoreError).message).toMatch(
      /migration 2 \(broken\) failed and was rolled back: no such table: nowhere/,
    );
    const store = open(file, { migrations: [core] });
    expect(store.db.prepare(`SELECT name FROM sqlite_master WHERE name = 'half'`).get()).toBeUndefined();
    expect(store.schemaVersion()).toBe(1);
  });

  it('warns when a recorded migration has another name than the code', () => {
    const file = path.join(dir, 'state.db');
    open(file, { migrations: [core, extra] }).close();
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    open(file, { migrations: [core, { ...extra, name: 'renamed' }], logger });
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
    expect(() => open(path.join(dir, 's.db'), { migrations: [extra, core] })).toThrow(/strictly increasing/);
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
      expect((err as StoreError).message).toMatch(/EACCES/);
    } finally {
      fs.chmodSync(ro, 0o700);
    }
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
});

describe('Store.transaction', () => {
  // meta and source_health alone: later migrations write rows of their own (meta.installation_id).
  const CORE_ONLY = { migrations: [core] };

  it('commits and returns the result', () => {
    const store = open(path.join(dir, 'state.db'), CORE_ONLY);
    const n = store.transaction(() => {
      store.db.prepare(`INSERT INTO meta (key, value) VALUES ('a', '1')`).run();
      return 42;
    });
    expect(n).toBe(42);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM meta').get()).toEqual({ n: 1 });
  });

  it('rolls back everything on a throw and rethrows the caller error unchanged', () => {
    const store = open(path.join(dir, 'state.db'), CORE_ONLY);
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

  it('reports a full disk as a StoreError and keeps what was committed before', () => {
    const store = open(path.join(dir, 'state.db'), CORE_ONLY);
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

  it('close is idempotent', () => {
    const store = open(path.join(dir, 'state.db'));
    store.close();
    expect(() => store.close()).not.toThrow();
    expect(store.db.open).toBe(false);
  });
});
