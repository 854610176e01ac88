/**
 * Reads an API timestamp. The reference says only that timestamps are strings, so this reads the
 * ISO 8601 forms services write — `2026-11-24T08:00:00Z`, with an offset (`+05:30`, `-0300`,
 * `+02`), with fractional seconds of any length, with a space instead of the `T` — and nothing
 * else. A time without a zone is refused rather than guessed: read as UTC or as local time, one
 * of the two would be wrong by hours, and an expiry or a backup's age would be read wrongly.
 *
 * The API schemas refuse a record whose timestamp this cannot read (naming the field and the
 * record), so past the client every timestamp a detector reads is one this reads.
 */

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)? ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Milliseconds since the epoch of an API timestamp, or null when it is absent or cannot be read. */
export function parseTime(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  const m = ISO_TIME.exec(value);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = s === undefined ? 0 : Number(s);
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]! || hour > 23 || minute > 59 || second > 60) return null;
  if (month === 2 && day === 29 && !isLeapYear(year)) return null;
  let offsetMinutes = 0;
  if (!zulu) {
    const hours = Number(oh);
    const minutes = om === undefined ? 0 : Number(om);
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (sign === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // A leap second (:60) is read as the last millisecond-exact instant before the next minute.
  const utc = Date.UTC(year, month - 1, day, hour, minute, Math.min(second, 59), second === 60 ? 999 : ms);
  return utc - offsetMinutes * 60_000;
}

/** Why `value` is not a timestamp {@link parseTime} reads, or null when it is one (or absent). */
export function timeProblem(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value === '' || parseTime(value) !== null) return null;
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}([.,]\d+)?)?$/.test(value)) {
    return `timestamp ${shown} has no time zone (Z or ±hh:mm); it is not guessed`;
  }
  return `${shown} is not an ISO 8601 timestamp with a time zone`;
}

/**
 * An API timestamp normalised to ISO 8601 (UTC), or null when it cannot be read: a finding's
 * `since` and the times in its details promise ISO 8601, so an unreadable one is left out.
 */
export function toIso(value: string | null | undefined): string | null {
  const ms = parseTime(value);
  return ms === null ? null : new Date(ms).toISOString();
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
