/** API timestamps as a table: the ISO 8601 forms services write are read to the same instant; the rest is refused. */
import { describe, expect, it } from 'vitest';
import { parseTime, timeProblem } from '../../src/lib/parse-time.js';

const INSTANT = Date.UTC(2026, 10, 24, 8, 0, 5, 123);

describe('parseTime', () => {
  it.each([
    ['2026-11-24T08:00:05.123Z', INSTANT],
    ['2026-11-24T08:00:05.123456Z', INSTANT], // microseconds (Python, PostgreSQL)
    ['2026-11-24T08:00:05.123456789Z', INSTANT], // nanoseconds (Go)
    ['2026-11-24T08:00:05,123Z', INSTANT], // ISO's comma
    ['2026-11-24 08:00:05.123Z', INSTANT], // a space for the T
    ['2026-11-24t08:00:05.123z', INSTANT],
    ['2026-11-24T13:30:05.123+05:30', INSTANT],
    ['2026-11-24T05:00:05.123-03:00', INSTANT],
    ['2026-11-24T05:00:05.123-0300', INSTANT],
    ['2026-11-24T10:00:05.123+02', INSTANT],
    ['2026-11-24 13:30:05.123 +05:30', INSTANT], // a space before the offset
    ['2026-11-24T08:00:05Z', INSTANT - 123],
    ['2026-11-24T08:00Z', INSTANT - 5_123], // no seconds
    ['2026-11-23T23:00:05.123-09:00', INSTANT], // the day before, locally
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2026-12-31T23:59:60Z', Date.UTC(2026, 11, 31, 23, 59, 59, 999)], // a leap second
  ])('%s', (text, ms) => {
    expect(parseTime(text)).toBe(ms);
    expect(timeProblem(text)).toBeNull();
  });

  it.each([
    ['2026-11-24T08:00:05', /has no time zone/],
    ['2026-11-24 08:00:05.123', /has no time zone/],
    ['2026-11-24', /not an ISO 8601 timestamp/],
    ['next tuesday', /not an ISO 8601 timestamp/],
    ['1732435205', /not an ISO 8601 timestamp/], // epoch seconds: a string, but not a time it says what zone of
    ['Tue, 24 Nov 2026 08:00:05 GMT', /not an ISO 8601 timestamp/], // Date.parse would read it; the reference does not say it
    ['2026-13-01T00:00:00Z', /not an ISO 8601 timestamp/],
    ['2026-02-30T00:00:00Z', /not an ISO 8601 timestamp/],
    ['2025-02-29T00:00:00Z', /not an ISO 8601 timestamp/],
    ['2026-11-24T24:00:00Z', /not an ISO 8601 timestamp/],
    ['2026-11-24T08:00:00+25:00', /not an ISO 8601 timestamp/],
    [`2026-11-24T08:00:00Z${'x'.repeat(100)}`, /…" is not/], // long values are cut in the message
  ])('refuses %s', (text, problem) => {
    expect(parseTime(text)).toBeNull();
    expect(timeProblem(text)).toMatch(problem);
  });

  it('reads absent values as unknown, not as a problem', () => {
    for (const v of [null, undefined, '']) {
      expect(parseTime(v)).toBeNull();
      expect(timeProblem(v)).toBeNull();
    }
  });
});

describe('parseTime on the canonical form', () => {
  it('reads every day of four centuries to the instant Date.parse gives, milliseconds included', () => {
    let checked = 0;
    for (let day = Date.UTC(1900, 0, 1); day < Date.UTC(2300, 0, 1); day += 86_400_000 + 3_601_001) {
      const iso = new Date(day).toISOString();
      expect(parseTime(iso)).toBe(Date.parse(iso));
      expect(parseTime(iso.replace(/\.\d{3}Z$/, 'Z'))).toBe(Date.parse(iso.replace(/\.\d{3}Z$/, 'Z')));
      checked += 1;
    }
    expect(checked).toBeGreaterThan(100_000);
  });
});
