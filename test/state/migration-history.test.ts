/**
 * The migrations are one definition each for both engines (src/state/migrations/, with the
 * dialect of src/state/sql-dialect.ts). Before that, every migration was written twice, once per
 * engine; states in the field were built by those copies, frozen in test/fixtures/migrations-v14/.
 * Here, on each engine, a database built by the frozen copies and one built by today's definitions
 * must have the same schema to the letter (SQLite: `sqlite_master`, the very SQL text; PostgreSQL:
 * columns with types, defaults and identities, constraints, indexes, sequences), and a state the
 * frozen copies took part of the way must be taken the rest by today's to that same schema, its
 * recorded steps untouched. And the two engines must still end with the same tables and columns.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import type { Migration } from '../../src/state/migration.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import type { SqlDatabase, SqlEngine } from '../../src/state/sql-database.js';
import { POSTGRES_MIGRATIONS_V14 } from '../fixtures/migrations-v14/postgres/index.js';
import { SQLITE_MIGRATIONS_V14 } from '../fixtures/migrations-v14/sqlite/index.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const FROZEN: Record<SqlEngine, readonly Migration[]> = {
  sqlite: SQLITE_MIGRATIONS_V14,
  postgres: POSTGRES_MIGRATIONS_V14,
};

/** The last version the frozen copies knew. */
const FROZEN_VERSION = 14;

/** Everything SQLite knows of a schema: every table, index and trigger with its SQL as written. */
function sqliteSchema(db: SqlDatabase): unknown {
  return db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`).all();
}

/** What PostgreSQL knows of a schema, from its catalog, in a stable order. */
function postgresSchema(db: SqlDatabase): unknown {
  return {
    columns: db
      .prepare(
        `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default,
                is_identity, identity_generation
           FROM information_schema.columns WHERE table_schema = current_schema()
          ORDER BY table_name, ordinal_position`,
      )
      .all(),
    constraints: db
      .prepare(
        `SELECT conrelid::regclass::text AS on_table, conname, pg_get_constraintdef(oid) AS definition
           FROM pg_constraint WHERE connamespace = current_schema()::regnamespace
          ORDER BY on_table, conname`,
      )
      .all(),
    indexes: db
      .prepare(
        `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
          ORDER BY tablename, indexname`,
      )
      .all(),
    sequences: db
      .prepare(
        `SELECT sequence_name, data_type, start_value, increment FROM information_schema.sequences
          WHERE sequence_schema = current_schema() ORDER BY sequence_name`,
      )
      .all(),
  };
}

function schemaOf(db: SqlDatabase): unknown {
  return db.engine === 'sqlite' ? sqliteSchema(db) : postgresSchema(db);
}

/** One column as both engines can say it: an integer of any width is an integer. */
interface Column {
  kind: string;
  required: boolean;
  primaryKey: boolean;
}

function kindOf(declared: string): string {
  if (/int/i.test(declared)) return 'integer';
  if (/text|char/i.test(declared)) return 'text';
  return declared.toLowerCase();
}

/** Each table's columns, as both engines can say them (the parity the two engines must keep). */
function portableColumns(db: SqlDatabase): Record<string, Record<string, Column>> {
  const rows =
    db.engine === 'sqlite'
      ? db
          .prepare<[], { table_name: string; column_name: string; type: string; required: number; pk: number }>(
            `SELECT m.name AS table_name, c.name AS column_name, c.type, c."notnull" AS required, c.pk
               FROM sqlite_master m JOIN pragma_table_info(m.name) c
              WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`,
          )
          .all()
      : db
          .prepare<[], { table_name: string; column_name: string; type: string; required: number; pk: number }>(
            `SELECT c.table_name, c.column_name, c.data_type AS type,
                    CASE c.is_nullable WHEN 'NO' THEN 1 ELSE 0 END AS required,
                    (SELECT COUNT(*) FROM information_schema.table_constraints t
                       JOIN information_schema.key_column_usage k
                         ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema
                      WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema
                        AND k.table_name = c.table_name AND k.column_name = c.column_name) AS pk
               FROM information_schema.columns c WHERE c.table_schema = current_schema()`,
          )
          .all();
  const tables: Record<string, Record<string, Column>> = {};
  for (const r of rows) {
    tables[r.table_name] ??= {};
    tables[r.table_name]![r.column_name] = {
      kind: kindOf(r.type),
      required: Number(r.required) === 1 || Number(r.pk) > 0,
      primaryKey: Number(r.pk) > 0,
    };
  }
  return tables;
}

describe.each(STATE_BACKENDS)('the migrations on $name, against the frozen copies they replaced', (backend) => {
  const states: TestState[] = [];
  const fresh = () => {
    const state = backend.fresh();
    states.push(state);
    return state;
  };
  const upTo = (migrations: readonly Migration[], version: number) => migrations.filter((m) => m.version <= version);
  /** A new state's schema, built by today's migrations. */
  let today: unknown;

  beforeAll(() => {
    today = schemaOf(fresh().open().db);
  });
  afterAll(() => {
    for (const s of states.splice(0)) s.cleanup();
  });

  it('keep the numbers and names of the frozen ones', () => {
    expect(upTo(ALL_MIGRATIONS, FROZEN_VERSION).map((m) => [m.version, m.name])).toEqual(
      FROZEN[backend.engine].map((m) => [m.version, m.name]),
    );
  });

  it('build the very schema the frozen ones built', () => {
    const frozen = schemaOf(fresh().open({ migrations: FROZEN[backend.engine] }).db);
    const now = schemaOf(fresh().open({ migrations: upTo(ALL_MIGRATIONS, FROZEN_VERSION) }).db);
    expect(now).toEqual(frozen);
  });

  // 4: before the installation id (random on each engine its own way); 8: before the one step the
  // engines take differently (009 widens a CHECK); 14: all the frozen ones.
  it.each([4, 8, FROZEN_VERSION])(
    'take a state the frozen ones brought to version %i on to the schema of a new one, its steps untouched',
    (version) => {
      const state = fresh();
      state.open({ migrations: upTo(FROZEN[backend.engine], version), clock: new ManualClock(1_000) }).close();
      const store = state.open({ clock: new ManualClock(2_000) });
      expect(schemaOf(store.db)).toEqual(today);
      const steps = store.db
        .prepare<[], { version: number; name: string; applied_at: number }>(
          'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
        )
        .all()
        .map((r) => ({ ...r, applied_at: Number(r.applied_at) }));
      expect(steps).toEqual(
        ALL_MIGRATIONS.map((m) => ({
          version: m.version,
          name: m.name,
          applied_at: m.version <= version ? 1_000 : 2_000,
        })),
      );
    },
  );
});

describe('both engines, every migration applied', () => {
  const states: TestState[] = [];
  afterEach(() => {
    for (const s of states.splice(0)) s.cleanup();
  });

  it('have the same tables, and in each the same columns: kind, required, primary key', () => {
    const [sqlite, postgres] = STATE_BACKENDS.map((backend) => {
      const state = backend.fresh();
      states.push(state);
      return portableColumns(state.open().db);
    });
    expect(postgres).toEqual(sqlite);
  });
});
