/**
 * Reads a `Retry-After` header: delta-seconds or an HTTP-date (RFC 9110 §10.2.3), as a wait in ms
 * from `now` (a date in the past is 0). Anything else (absent, garbage, a negative number) is
 * `undefined`, and the caller falls back to its own backoff. No cap here: the API client gives up
 * on a wait it finds too long, the notifier caps it; each caller knows its own limit.
 */
export function parseRetryAfter(value: string | readonly string[] | null | undefined, now: number): number | undefined {
  const text = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP-date always names a weekday and a month; without them Date.parse would read "-3" as a year.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
