import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { clockWentBack } from '../../src/lib/clock.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('ManualClock', () => {
  // Stepped back as NTP or a restored VM steps a wall clock, a sleeper still wakes after the time
  // it asked for, as timers do.
  it.each([0, 5_000])(
    'wakes a sleeper when time passes its deadline, and not before (stepped back %i ms)',
    async (back) => {
      const clock = new ManualClock(10_000);
      let woke = false;
      const sleeping = clock.sleep(1_000).then(() => (woke = true));
      clock.stepBack(back);
      expect(clock.now()).toBe(10_000 - back);
      clock.advance(999);
      await Promise.resolve();
      expect(woke).toBe(false);
      clock.advance(1);
      await sleeping;
      expect(woke).toBe(true);
    },
  );

  it('nextWakeAt names the earliest deadline of those asleep, undefined when none is', async () => {
    const clock = new ManualClock(0);
    expect(clock.nextWakeAt()).toBeUndefined();
    const late = clock.sleep(5_000);
    const ac = new AbortController();
    const early = clock.sleep(2_000, ac.signal).catch(() => 'aborted');
    expect(clock.nextWakeAt()).toBe(2_000);
    // An aborted sleeper no longer counts.
    ac.abort();
    expect(await early).toBe('aborted');
    expect(clock.nextWakeAt()).toBe(5_000);
    clock.advance(5_000);
    await late;
    expect(clock.nextWakeAt()).toBeUndefined();
  });

  it('lets go of the signal once woken: a thousand sleeps on one signal leave no listener on it', async () => {
    const clock = new ManualClock(0);
    // A cycle's signal: every wait for the rate limit's token sleeps on it (Node warns past 10 listeners).
    const cycle = new AbortController();
    for (let i = 0; i < 1_000; i++) {
      const sleeping = clock.sleep(100, cycle.signal);
      clock.advance(100);
      await sleeping;
    }
    expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(0);
    // Still ended by the signal while asleep.
    const asleep = clock.sleep(100, cycle.signal);
    expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(1);
    cycle.abort(new Error('stopped'));
    await expect(asleep).rejects.toThrow('stopped');
    expect(clock.nextWakeAt()).toBeUndefined();
  });
});

describe('clockWentBack', () => {
  it.each([
    { notBefore: 1_000 + 60_000, longest: 60_000, back: false, what: 'the longest wait, set just now' },
    {
      notBefore: 1_000 + 62_000,
      longest: 60_000,
      back: false,
      what: 'two seconds more: another replica a little ahead',
    },
    { notBefore: 1_000 + 62_001, longest: 60_000, back: true, what: 'further ahead than any wait set' },
  ])('$what: $back', ({ notBefore, longest, back }) => {
    expect(clockWentBack(notBefore, 1_000, longest)).toBe(back);
  });
});
