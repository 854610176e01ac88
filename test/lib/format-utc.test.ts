import { describe, expect, it } from 'vitest';
import { formatUtc, type UtcStyle } from '../../src/lib/format-utc.js';

describe('formatUtc', () => {
  it.each<[number, UtcStyle | undefined, string]>([
    [Date.UTC(2026, 10, 1, 12, 0, 0), undefined, '2026-11-01 12:00 UTC'],
    [Date.UTC(2026, 10, 1, 12, 0, 59, 999), 'reading', '2026-11-01 12:00 UTC'],
    [Date.UTC(2026, 10, 1, 12, 0, 0), 'iso', '2026-11-01T12:00:00Z'],
    [Date.UTC(2026, 10, 1, 12, 0, 0, 250), 'iso', '2026-11-01T12:00:00.250Z'],
  ])('%d in %s → %s', (ms, style, text) => {
    expect(formatUtc(ms, style)).toBe(text);
  });
});
