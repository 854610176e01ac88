import type { SqlDialect } from './sql-dialect.js';

/**
 * One step of the database schema, for both engines. Each migration lives in
 * `migrations/NNN-name.ts` as the file's default export and is listed once in `migrations/index.ts`
 * (which says how to write one).
 */
export interface Migration {
  /** Strictly increasing; the number in the file name. Never reuse or renumber a shipped one. */
  version: number;
  /** Short name for logs and the `schema_migrations` table. */
  name: string;
  /**
   * SQL run in one transaction together with its `schema_migrations` row: written once, in terms
   * of the engine's {@link SqlDialect} where the engines differ (a plain string where they do not).
   */
  up: string | ((dialect: SqlDialect) => string);
}

/** The migration `version` called `name` (see {@link Migration}), as a migration file exports it. */
export function defineMigration(version: number, name: string, up: Migration['up']): Migration {
  return { version, name, up };
}

/** The SQL of `migration` for `dialect`'s engine. */
export function migrationSql(migration: Migration, dialect: SqlDialect): string {
  return typeof migration.up === 'string' ? migration.up : migration.up(dialect);
}
