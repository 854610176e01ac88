/**
 * A time as a person reads it in a summary: `2026-11-03 13:00 UTC`. Details keep full ISO 8601;
 * summaries are for reading at a glance.
 */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
