/** The resolve guard as a table: which cycles' resolutions are held, and when they go ahead. */
import { describe, expect, it } from 'vitest';
import { guardResolutions, type ResolveGuardOptions } from '../../src/alerts/resolve-guard.js';

const DEFAULTS: ResolveGuardOptions = { min_alerts: 5, max_share: 0.5, confirm_cycles: 2 };

describe('guardResolutions', () => {
  it.each([
    // firing, resolving, suspect before, options → hold, suspect cycles after, reason
    [10, 0, 0, DEFAULTS, false, 0, 'plausible'],
    [10, 4, 0, DEFAULTS, false, 0, 'plausible'], // fewer than min_alerts
    [10, 5, 0, DEFAULTS, false, 0, 'plausible'], // exactly half: not more than max_share
    [10, 6, 0, DEFAULTS, true, 1, 'too many at once'],
    [10, 10, 0, DEFAULTS, true, 1, 'too many at once'], // the answer holds none of them
    [10, 10, 1, DEFAULTS, false, 0, 'confirmed'], // the second suspect cycle confirms
    [10, 4, 1, DEFAULTS, false, 0, 'plausible'], // a plausible cycle resets the count
    [100, 40, 0, DEFAULTS, false, 0, 'plausible'], // many, but a small share
    [10, 10, 0, { ...DEFAULTS, confirm_cycles: 1 }, false, 0, 'confirmed'], // 1 turns the guard off
    [10, 10, 1, { ...DEFAULTS, confirm_cycles: 3 }, true, 2, 'too many at once'],
    [10, 10, 2, { ...DEFAULTS, confirm_cycles: 3 }, false, 0, 'confirmed'],
    [3, 3, 0, { ...DEFAULTS, min_alerts: 2 }, true, 1, 'too many at once'],
  ] as const)(
    'firing %i, resolving %i, %i suspect before → hold %s',
    (firing, resolving, suspectBefore, options, hold, after, reason) => {
      const decision = guardResolutions({ firing, resolving, suspectBefore }, options);
      expect(decision).toMatchObject({ hold, suspectCycles: after, reason });
    },
  );
});
