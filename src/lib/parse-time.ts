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

/**
 * An API timestamp normalised to ISO 8601 (UTC), or null when it cannot be read: a finding's
 * `since` and the times in its details promise ISO 8601, so an unreadable one is left out.
 */
export function toIso(value: string | null | undefined): string | null {
  const ms = parseTime(value);
  return ms === null ? null : new Date(ms).toISOString();
}
