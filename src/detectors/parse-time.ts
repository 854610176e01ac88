/**
 * Reads an API timestamp. The reference says only that timestamps are strings, so anything
 * `Date.parse` cannot read counts as unknown (null), and detectors skip the rule that needed it
 * rather than guess.
 */
export function parseTime(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** An API timestamp normalised to ISO 8601 (UTC), or the raw text when it cannot be read. */
export function toIso(value: string | null | undefined): string | null {
  const ms = parseTime(value);
  if (ms !== null) return new Date(ms).toISOString();
  return value === undefined || value === '' ? null : value;
}
