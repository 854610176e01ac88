import { describe, expect, it } from 'vitest';
import { durationSchema, offOrDurationSchema, parseDuration } from '../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['15m', 900_000],
    ['26h', 93_600_000],
    ['8d', 691_200_000],
    ['2w', 1_209_600_000],
    ['1h30m', 5_400_000],
    ['1m30s500ms', 90_500],
    ['0s', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', '30', 's', '1.5h', '-1s', '30 s', '1y', 'off', '30sec'])('refuses %j, naming it', (text) => {
    expect(() => parseDuration(text)).toThrow(
      new RegExp(`^${JSON.stringify(text).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a duration`),
    );
  });
});

describe('duration schemas', () => {
  it('parse strings to milliseconds and refuse bare numbers', () => {
    expect(durationSchema.parse('10m')).toBe(600_000);
    const bare = durationSchema.safeParse(30);
    expect(bare.success).toBe(false);
    expect(bare.error?.issues[0]?.message).toMatch(/a string with a unit/);
  });

  it('offOr turns "off" into null and keeps durations', () => {
    expect(offOrDurationSchema.parse('off')).toBeNull();
    expect(offOrDurationSchema.parse('26h')).toBe(93_600_000);
    expect(offOrDurationSchema.safeParse('of').error?.issues[0]?.message).toMatch(/^must be "off" or a duration/);
  });
});
