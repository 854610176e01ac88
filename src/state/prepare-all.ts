import type { SqlDatabase, SqlStatement } from './sql-database.js';

/**
 * Prepares a store's statements once, by name: the store keeps its SQL in one table beside it and
 * runs `statements.name`, rather than declaring and preparing a field per statement.
 */
export function prepareAll<K extends string>(
  db: SqlDatabase,
  sql: Readonly<Record<K, string>>,
): Record<K, SqlStatement> {
  const out = {} as Record<K, SqlStatement>;
  for (const name of Object.keys(sql) as K[]) out[name] = db.prepare(sql[name]);
  return out;
}
