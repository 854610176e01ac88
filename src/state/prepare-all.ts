import type { SqlDatabase, SqlParameters, SqlStatement, StatementOf } from './sql-database.js';

declare const statementTypes: unique symbol;

/**
 * SQL text that carries its statement's parameter and row types, for {@link prepareAll}: written
 * `sql<[string, number], Row>('…')`. The types are the compiler's alone; at run time it is the text.
 */
export type TypedSql<P extends SqlParameters = unknown[], R = unknown> = string & {
  readonly [statementTypes]?: (params: P) => R;
};

/** `text` as the SQL of a statement taking parameters `P` (a tuple, or one object of named ones) and giving rows `R`. */
export function sql<P extends SqlParameters = unknown[], R = unknown>(text: string): TypedSql<P, R> {
  return text;
}

/** The statement each {@link TypedSql} of a table prepares to, typed as its text says. */
export type Prepared<T> = {
  [K in keyof T]: T[K] extends TypedSql<infer P, infer R> ? StatementOf<P, R> : never;
};

/**
 * Prepares a store's statements once, by name: the store keeps its SQL in one table beside it
 * (each entry `sql<Params, Row>(…)`) and runs `statements.name`, typed, rather than declaring and
 * preparing a field per statement.
 */
export function prepareAll<T extends Record<string, TypedSql<never, unknown>>>(db: SqlDatabase, table: T): Prepared<T> {
  const out: Record<string, SqlStatement> = {};
  for (const name of Object.keys(table)) out[name] = db.prepare(table[name]!);
  return out as Prepared<T>;
}
