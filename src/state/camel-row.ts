/**
 * A row of a state table as the code names its fields: each `snake_case` column under its
 * `camelCase` name (`first_sent_at` → `firstSentAt`), so a store maps its rows by one rule rather
 * than one line per column. The type is the caller's word, as a cast of each column was.
 */
export function camelRow<T>(
  row: Readonly<Record<string, unknown>>,
  options: {
    /** Columns that hold JSON text: parsed (NULL stays null). */
    json?: readonly string[];
    /** Columns named otherwise in the code than the rule says (`idempotency_key` → `key`). */
    rename?: Readonly<Record<string, string>>;
  } = {},
): T {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    const name = options.rename?.[column] ?? column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    out[name] = options.json?.includes(column) && typeof value === 'string' ? JSON.parse(value) : value;
  }
  return out as T;
}

/** The column of a field by the same rule, backwards: `firstSentAt` → `first_sent_at`. */
export function snakeColumn(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
