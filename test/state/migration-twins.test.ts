/**
 * Every SQLite migration has its PostgreSQL twin (same version, same name), and the two engines
 * end with the same schema: the same tables, the same columns (of the same kind, required or not,
 * in the same primary keys) and the same named indexes. A SQLite migration written without its
 * twin fails here, saying what to write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { POSTGRES_MIGRATIONS } from '../../src/state/migrations/postgres/index.js';
import type { SqlDatabase } from '../../src/state/sql-database.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

/** One column as both engines can say it. */
interface Column {
  kind: 'integer' | 'text' | string;
  required: boolean;
  primaryKey: boolean;
}

/** A schema: each table's columns by name, and the named indexes. */
interface Schema {
  tables: Record<string, Record<string, Column>>;
  indexes: string[];
}

function kindOf(declared: string): string {
  if (/int/i.test(declared)) return 'integer';
  if (/text|char/i.test(declared)) return 'text';
  return declared.toLowerCase();
}

function sqliteSchema(db: SqlDatabase): Schema {
  const tables: Schema['tables'] = {};
  const names = db
    .prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .all();
  for (const { name } of names) {
    const columns = db
      .prepare<[string], { name: string; type: string; notnull: number; pk: number }>(
        'SELECT name, type, "notnull", pk FROM pragma_table_info(?)',
      )
      .all(name);
    tables[name] = Object.fromEntries(
      columns.map((c) => [
        c.name,
        { kind: kindOf(c.type), required: c.notnull === 1 || c.pk > 0, primaryKey: c.pk > 0 },
      ]),
    );
  }
  const indexes = db
    .prepare<[], { name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name`,
    )
    .all()
    .map((r) => r.name);
  return { tables, indexes };
}

function postgresSchema(db: SqlDatabase): Schema {
  const tables: Schema['tables'] = {};
  const columns = db
    .prepare<[], { table_name: string; column_name: string; data_type: string; is_nullable: string; pk: number }>(
      `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable,
         (SELECT COUNT(*) FROM information_schema.table_constraints t
            JOIN information_schema.key_column_usage k
              ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
            WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema
              AND k.table_name = c.table_name AND k.column_name = c.column_name) AS pk
       FROM information_schema.columns c WHERE c.table_schema = current_schema()`,
    )
    .all();
  for (const c of columns) {
    tables[c.table_name] ??= {};
    tables[c.table_name]![c.column_name] = {
      kind: kindOf(c.data_type),
      required: c.is_nullable === 'NO',
      primaryKey: c.pk > 0,
    };
  }
  // Indexes made by a migration's CREATE INDEX, not those behind a primary key or UNIQUE constraint.
  const indexes = db
    .prepare<[], { name: string }>(
      `SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()
         AND indexname NOT IN (SELECT conname FROM pg_constraint) ORDER BY indexname`,
    )
    .all()
    .map((r) => r.name);
  return { tables, indexes };
}

describe('the PostgreSQL twin of each migration', () => {
  it.each(ALL_MIGRATIONS.map((m) => [m.version, m.name] as const))('migration %i (%s) has one', (version, name) => {
    const twin = POSTGRES_MIGRATIONS.find((m) => m.version === version);
    const file = `src/state/migrations/postgres/${String(version).padStart(3, '0')}-${name}.ts`;
    expect(
      twin,
      `SQLite migration ${version} (${name}) has no PostgreSQL twin: write ${file} and list it in src/state/migrations/postgres/index.ts`,
    ).toBeDefined();
    expect(twin!.name, `the PostgreSQL twin of migration ${version} is named otherwise`).toBe(name);
  });

  it('and no twin without its SQLite migration', () => {
    expect(POSTGRES_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(ALL_MIGRATIONS.map((m) => [m.version, m.name]));
  });
});

describe('both engines, every migration applied', () => {
  const states: TestState[] = [];
  const schemas = new Map<string, Schema>();
  beforeAll(() => {
    for (const backend of STATE_BACKENDS) {
      const state = backend.fresh();
      states.push(state);
      const store = state.open();
      schemas.set(backend.engine, backend.engine === 'sqlite' ? sqliteSchema(store.db) : postgresSchema(store.db));
    }
  });
  afterAll(() => {
    for (const s of states) s.cleanup();
  });

  it('have the same tables', () => {
    expect(Object.keys(schemas.get('postgres')!.tables).sort()).toEqual(
      Object.keys(schemas.get('sqlite')!.tables).sort(),
    );
  });

  it('have the same columns in each table: kind, required, primary key', () => {
    const sqlite = schemas.get('sqlite')!.tables;
    const postgres = schemas.get('postgres')!.tables;
    for (const table of Object.keys(sqlite)) {
      expect(postgres[table], `table ${table} on PostgreSQL`).toEqual(sqlite[table]);
    }
  });

  it('have the same named indexes', () => {
    expect(schemas.get('postgres')!.indexes).toEqual(schemas.get('sqlite')!.indexes);
  });
});
