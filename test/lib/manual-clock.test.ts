import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';

describe('ManualClock', () => {
  it('wakes a sleeper when time passes its deadline, and not before', async () => {
    const clock = new ManualClock(0);
    let woke = false;
    const sleeping = clock.sleep(1_000).then(() => (woke = true));
    clock.advance(999);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await sleeping;
    expect(woke).toBe(true);
  });

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
});
