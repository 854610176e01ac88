import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../helpers/manual-clock.js';
import { clockTimeout } from '../../src/lib/clock-timeout.js';

const late = () => new Error('time is up');

describe('clockTimeout', () => {
  it('aborts with its reason once the time has passed on the clock, and not before', async () => {
    const clock = new ManualClock(0);
    const { signal } = clockTimeout(clock, 1_000, late);
    clock.advance(999);
    await Promise.resolve();
    expect(signal.aborted).toBe(false);
    clock.advance(1);
    await Promise.resolve();
    expect(signal.reason).toEqual(new Error('time is up'));
  });

  it("aborts with the parent's reason when the parent aborts first, or had already", () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const timeout = clockTimeout(clock, 1_000, late, parent.signal);
    parent.abort(new Error('stopped'));
    expect(timeout.signal.reason).toEqual(new Error('stopped'));
    expect(clockTimeout(clock, 1_000, late, parent.signal).signal.reason).toEqual(new Error('stopped'));
  });

  it('disposed, lets go of the timer and the parent: nothing aborts it any more', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const timeout = clockTimeout(clock, 1_000, late, parent.signal);
    timeout.dispose();
    expect(clock.nextWakeAt()).toBeUndefined();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    clock.advance(1_000);
    parent.abort();
    await Promise.resolve();
    expect(timeout.signal.aborted).toBe(false);
  });

  it('without a time, only the parent aborts it', async () => {
    const clock = new ManualClock(0);
    const parent = new AbortController();
    const timeout = clockTimeout(clock, undefined, late, parent.signal);
    expect(clock.nextWakeAt()).toBeUndefined();
    parent.abort(new Error('stopped'));
    expect(timeout.signal.reason).toEqual(new Error('stopped'));
  });
});
