import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/duration.js';
import { formatDuration, type DurationStyle } from '../../src/lib/format-duration.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0s'],
    [-5000, '0s'],
    [45_000, '45s'],
    [5 * MINUTE + 3000, '5m 3s'],
    [2 * HOUR, '2h'],
    [2 * HOUR + 5 * MINUTE + 59_000, '2h 5m'],
    [2 * HOUR + 5_000, '2h'],
    [DAY + 2 * HOUR, '1d 2h'],
    [3 * DAY + 30 * MINUTE, '3d'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each<[number, DurationStyle, string]>([
    [0, 'exact', '0s'],
    [500, 'exact', '500ms'],
    [90_000, 'exact', '1m30s'],
    [93_600_000, 'exact', '1d2h'],
    [DAY + 2 * HOUR + 5 * MINUTE + 1500, 'exact', '1d2h5m1s500ms'],
    [0, 'seconds', '0s'],
    [1500, 'seconds', '1s'],
    [90_000, 'seconds', '1m30s'],
    [HOUR, 'seconds', '1h'],
    [26 * HOUR + 5 * MINUTE, 'seconds', '1d2h5m'],
    [30 * MINUTE - 400, 'seconds', '29m59s'],
    [500, 'brief', '0s'],
  ])('%d ms in %s → %s', (ms, style, text) => {
    expect(formatDuration(ms, style)).toBe(text);
  });

  // A time left or gone by, as a sentence says it ("expires in …"): never a day short.
  it.each<[string, number, string]>([
    ['nothing', 0, '0s'],
    ['clock skew', -5000, '0s'],
    ['under a minute', 45_000, '45s'],
    ['under an hour', HOUR - 1000, '59m 59s'],
    ['hours and minutes', 5 * HOUR + 30 * MINUTE, '5h 30m'],
    ['a second short of a day', DAY - 1000, '23h 59m'],
    ['one day, in hours', DAY, '24h'],
    ['a day and a half', 36 * HOUR, '36h'],
    ['a minute short of two days: not "1 day"', 2 * DAY - MINUTE, '47h 59m'],
    ['two days', 2 * DAY, '2 days'],
    ['just under two and a half days: rounded down', 2 * DAY + 12 * HOUR - 1000, '2 days'],
    ['two and a half days: rounded up', 2 * DAY + 12 * HOUR, '3 days'],
    ['a day short of a week', 6 * DAY + 23 * HOUR, '7 days'],
    ['two weeks', 14 * DAY, '14 days'],
  ])('days: %s (%d ms) → %s', (_what, ms, text) => {
    expect(formatDuration(ms, 'days')).toBe(text);
  });

  it.each<DurationStyle>(['brief', 'exact', 'seconds', 'days'])(
    'in %s, Infinity reads forever and a negative 0s',
    (style) => {
      expect(formatDuration(Infinity, style)).toBe('forever');
      expect(formatDuration(-1500, style)).toBe('0s');
    },
  );

  it.each([1, 500, 30_000, 90_000, 93_600_000, 8 * DAY + 1, 2 * DAY + 3 * HOUR + 4 * MINUTE + 5_006])(
    'exact is read back by parseDuration: %d ms',
    (ms) => {
      expect(parseDuration(formatDuration(ms, 'exact'))).toBe(ms);
    },
  );
});
