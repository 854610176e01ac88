/**
 * The writes of a PostgreSQL transaction held back and sent with the next statement that needs an
 * answer (src/state/postgres-database.ts), on the run's shared server: what commits, what a write's
 * count says and when, and where a held write's failure surfaces (the statement it went with, in
 * its transaction or savepoint, which it rolls back as a failing statement would have).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { PostgresError } from '../../src/state/postgres-error.js';
import { PostgresDatabase } from '../../src/state/postgres-database.js';
import { sharedPostgres, type PostgresCluster } from '../helpers/postgres.js';

let cluster: PostgresCluster;
let db: PostgresDatabase;

beforeAll(() => {
  cluster = sharedPostgres();
  db = PostgresDatabase.open({
    url: new Secret(cluster.url(cluster.createDatabase())),
    connectTimeoutMs: 10_000,
    statementTimeoutMs: 30_000,
    busyTimeoutMs: 10_000,
  });
  db.exec('CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT NOT NULL)');
  db.exec('CREATE TABLE e (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)');
}, 120_000);
afterAll(() => {
  db?.close();
  cluster?.close();
});

const insert = () => db.prepare<[number, string]>('INSERT INTO t (id, v) VALUES (?, ?)');
const ids = () =>
  db
    .prepare<[], { id: number }>('SELECT id FROM t ORDER BY id')
    .all()
    .map((r) => r.id);
const clear = () => db.exec('DELETE FROM t');

/** PostgreSQL's refusal of a taken key, as thrown. */
const keyTaken = () => expect.objectContaining({ constructor: PostgresError, code: '23505' }) as Error;

describe('writes held back in a PostgreSQL transaction', () => {
  it.each([1, 255, 256, 257, 1_000])('%i inserts commit, every one, in order', (n) => {
    clear();
    const results = db.transaction(() => Array.from({ length: n }, (_, i) => insert().run(i, `v${i}`)));
    expect(ids()).toEqual(Array.from({ length: n }, (_, i) => i));
    // Each count as the server gave it, read after the commit as SQLite's would be.
    expect(results.every((r) => r.changes === 1)).toBe(true);
  });

  it("says a write's count when read, inside the transaction, sending what was held before it", () => {
    clear();
    db.transaction(() => {
      insert().run(1, 'a');
      insert().run(2, 'b');
      const none = db.prepare<[string]>('UPDATE t SET v = ? WHERE id > 100').run('x');
      expect(none.changes).toBe(0);
      const both = db.prepare<[string]>('UPDATE t SET v = ?').run('y');
      // A read sees every write before it.
      expect(db.prepare('SELECT COUNT(*) AS n FROM t WHERE v = ?').get('y')).toEqual({ n: 2 });
      expect(both).toMatchObject({ changes: 2 });
    });
  });

  it.each([
    ['the COMMIT', () => undefined],
    ['a read', () => db.prepare('SELECT 1 AS one').get()],
    ['a count read', () => insert().run(3, 'c').changes],
  ])(
    'a held write refused by the server fails the transaction at %s, with its error; nothing is written',
    (_, next) => {
      clear();
      insert().run(1, 'before');
      expect(() =>
        db.transaction(() => {
          insert().run(2, 'a');
          insert().run(1, 'taken'); // the key is taken: refused
          insert().run(4, 'after');
          next();
        }),
      ).toThrow(keyTaken());
      expect(ids()).toEqual([1]);
    },
  );

  it('a held write refused in a savepoint rolls back the savepoint only', () => {
    clear();
    db.transaction(() => {
      insert().run(1, 'outer');
      expect(() =>
        db.transaction(() => {
          insert().run(2, 'inner');
          insert().run(1, 'taken');
        }),
      ).toThrow(keyTaken());
      insert().run(3, 'outer again');
    });
    expect(ids()).toEqual([1, 3]);
  });

  it('a write the transaction dropped unsent says so when its count is read; outside a transaction a write goes at once', () => {
    clear();
    let dropped: { changes: number } | undefined;
    expect(() =>
      db.transaction(() => {
        dropped = insert().run(1, 'a');
        throw new Error('the caller gives up');
      }),
    ).toThrow('the caller gives up');
    expect(() => dropped!.changes).toThrow(/rolled back before this write was sent/);
    expect(ids()).toEqual([]);
    expect(insert().run(5, 'alone')).toMatchObject({ changes: 1 });
    expect(ids()).toEqual([5]);
  });

  it("says an INSERT … RETURNING id's id when read, held back or not, as SQLite's rowid", () => {
    const add = db.prepare<[string]>('INSERT INTO e (v) VALUES (?) RETURNING id');
    const before = add.run('alone, outside a transaction');
    expect(before).toMatchObject({ changes: 1 });
    const first = Number(before.lastInsertRowid);
    expect(first).toBeGreaterThan(0);
    // More than one batch (256): every id is the one its row was given, in the order written.
    const written = db.transaction(() => {
      const held = Array.from({ length: 600 }, (_, i) => add.run(`v${i}`));
      // Read inside the transaction: sends what is held.
      expect(Number(held[0]!.lastInsertRowid)).toBe(first + 1);
      return held;
    });
    const stored = db.prepare<[number], { id: number; v: string }>('SELECT id, v FROM e WHERE id > ? ORDER BY id');
    expect(written.map((w) => [Number(w.lastInsertRowid), w.changes])).toEqual(stored.all(first).map((r) => [r.id, 1]));
    expect(stored.all(first).map((r) => r.v)).toEqual(Array.from({ length: 600 }, (_, i) => `v${i}`));
  });
});
