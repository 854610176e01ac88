/**
 * Many values asked of a table in a few statements: `IN (?, ?, …)` with a fixed count of
 * placeholders, so each statement is prepared once, in SQL both engines take (no JSON array
 * function is common to both). A cycle's touches and lookups cost a statement per
 * {@link IN_BATCH} values, however many there are.
 */

/** Values per statement. */
export const IN_BATCH = 500;

/** `IN (?, ?, …)`: {@link IN_BATCH} placeholders. */
export const IN_LIST = `IN (${Array.from({ length: IN_BATCH }, () => '?').join(', ')})`;

/**
 * `values`, each once, in batches of {@link IN_BATCH}; the last one repeats its first value to
 * fill the statement (IN matches a row once, however often its value is listed).
 */
export function* inBatches<T>(values: readonly T[]): Generator<T[]> {
  const distinct = [...new Set(values)];
  for (let i = 0; i < distinct.length; i += IN_BATCH) {
    const batch = distinct.slice(i, i + IN_BATCH);
    while (batch.length < IN_BATCH) batch.push(batch[0]!);
    yield batch;
  }
}
