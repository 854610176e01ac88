/**
 * How a time is written, always in UTC:
 * - `reading`: "2026-11-01 12:00 UTC", to the minute, for messages and summaries: a time everyone
 *   on the team reads the same way. (Details and stored data keep full ISO 8601.)
 * - `iso`: ISO 8601 without the milliseconds when they are zero ("2026-11-01T12:00:00Z"), for the
 *   command line's listings and their `--json`.
 */
export type UtcStyle = 'reading' | 'iso';

/** A time (ms since the epoch) in a {@link UtcStyle}, `reading` unless told. */
export function formatUtc(ms: number, style: UtcStyle = 'reading'): string {
  const iso = new Date(ms).toISOString();
  return style === 'iso' ? iso.replace(/\.000Z$/, 'Z') : `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}
