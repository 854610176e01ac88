import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/lib/format-duration.js';

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
});
