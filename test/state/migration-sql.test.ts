/**
 * A shipped migration must never change what it does to a database, though the TypeScript around
 * its SQL may. So every migration's SQL, as each engine is given it, is pinned here by its digest
 * (the first 16 hex digits of its SHA-256): a change to one byte of it, on either engine, or to its
 * name (it is written to `schema_migrations`), fails this test. A new migration adds its row; the
 * failure says which row.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type Migration, migrationSql } from '../../src/state/migration.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import type { SqlEngine } from '../../src/state/sql-database.js';
import { sqlDialect } from '../../src/state/sql-dialect.js';

/** [version, name, SQLite's digest, PostgreSQL's digest], as each migration shipped. */
const GOLDEN: readonly (readonly [number, string, string, string])[] = [
  [1, 'core', '833174addcce2cda', '6ac3e77e485c3199'],
  [2, 'alerts', '963a82ae5e758b8e', '257fc8ca3155931f'],
  [3, 'notify', 'e83164fb8d43fe68', 'ad97c429208ad5ef'],
  [4, 'remediation', 'fe7e8313fe89106d', '1b9a2e2efdd4245f'],
  [5, 'remediation-edge', '6d175e7a2f77cc33', '13c3dd466f0efb1f'],
  [6, 'alert-facts', 'cc056c1dba52b380', 'cc056c1dba52b380'],
  [7, 'console', 'fa270b4a6882ea7a', 'fa270b4a6882ea7a'],
  [8, 'alert-context', '42e5e37239138c8d', 'bdf8f6a867656a34'],
  [9, 'acknowledge', 'ac3339a2092943d2', '63860340a86ee5db'],
  [10, 'slack-app', 'ecd3f9bda1e02afa', '1618617982bcd93c'],
  [11, 'slack-interactions', '20a7f26c456dd136', 'ad20262309ee148b'],
  [14, 'alert-timing', '068d8529ac63f0bb', '17347034b62bf12b'],
  [15, 'outbox-unconfirmed', 'efb8688684287a6f', 'efb8688684287a6f'],
  [16, 'backup-readback', '5e5ca40c6ca5e037', '4bdf7574d03500ca'],
  [17, 'outbox-bodies', 'da1aa9f4d090cdd9', '59cb779cfa7c1c58'],
  [18, 'on-call-acknowledge', '5e0bbbe950f47fac', '0ca323b8540e2afb'],
  [20, 'outbox-claims', 'd2b87976c5e9dfb5', '8f54a31047685ac7'],
];

function digest(migration: Migration, engine: SqlEngine): string {
  return createHash('sha256')
    .update(migrationSql(migration, sqlDialect(engine)))
    .digest('hex')
    .slice(0, 16);
}

/** The row `GOLDEN` would hold for `migration` as it is written now. */
function rowOf(migration: Migration): string {
  return `[${migration.version}, '${migration.name}', '${digest(migration, 'sqlite')}', '${digest(migration, 'postgres')}']`;
}

/** Every way `migrations` differ from `GOLDEN`, each said as the row found against the row pinned. */
function goldenMismatches(migrations: readonly Migration[]): string[] {
  const pinned = new Map(
    GOLDEN.map((row) => [row[0], `[${row.map((v) => (typeof v === 'string' ? `'${v}'` : v)).join(', ')}]`]),
  );
  const found = new Map(migrations.map((m) => [m.version, rowOf(m)]));
  const versions = [...new Set([...pinned.keys(), ...found.keys()])].sort((a, b) => a - b);
  return versions
    .filter((v) => pinned.get(v) !== found.get(v))
    .map((v) => `version ${v}: found ${found.get(v) ?? 'nothing'}, pinned ${pinned.get(v) ?? 'nothing'}`);
}

/** `migration` with one byte of its SQL changed on `engine` only. */
function alteredOn(migration: Migration, engine: SqlEngine): Migration {
  return {
    ...migration,
    up: (d) => {
      const sql = migrationSql(migration, d);
      return d.engine === engine
        ? sql.replace(/(\S)(\s*)$/, (_match, last: string, tail: string) => `${last === ';' ? ',' : ';'}${tail}`)
        : sql;
    },
  };
}

describe('the SQL each migration emits', () => {
  it('is, on both engines, the SQL it shipped with', () => {
    expect(goldenMismatches(ALL_MIGRATIONS)).toEqual([]);
  });

  it.each(
    ALL_MIGRATIONS.flatMap((m, index) =>
      (['sqlite', 'postgres'] as const).map((engine) => [m.version, engine, index] as const),
    ),
  )('fails the pin when one byte of version %i changes on %s', (version, engine, index) => {
    const altered = ALL_MIGRATIONS.map((m, i) => (i === index ? alteredOn(m, engine) : m));
    const mismatches = goldenMismatches(altered);
    expect(mismatches).toHaveLength(1);
    expect(mismatches[0]).toMatch(new RegExp(`^version ${version}: `));
  });

  it.each([
    ['renamed', (m: Migration): Migration => ({ ...m, name: `${m.name}-renamed` })],
    ['renumbered', (m: Migration): Migration => ({ ...m, version: 999 })],
  ])('fails the pin when a migration is %s', (_how, change) => {
    const altered = ALL_MIGRATIONS.map((m, i) => (i === 2 ? change(m) : m));
    expect(goldenMismatches(altered)).not.toEqual([]);
  });

  it('fails the pin for a migration no row pins yet, and says the row to add', () => {
    const extra: Migration = { version: 9999, name: 'unpinned', up: 'SELECT 1;' };
    expect(goldenMismatches([...ALL_MIGRATIONS, extra])).toEqual([
      `version 9999: found ${rowOf(extra)}, pinned nothing`,
    ]);
  });
});
