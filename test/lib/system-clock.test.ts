/** The wall clock's sleep, on vitest's fake timers: long sleeps are waited out whole. */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_TIMER_MS, systemClock } from '../../src/lib/clock.js';

afterEach(() => vi.useRealTimers());

const DAY = 86_400_000;

describe('systemClock.sleep', () => {
  it.each([
    ['a month (past one timer’s 24.8 days)', 31 * DAY],
    ['a year', 366 * DAY],
    ['an hour', 3_600_000],
  ])('sleeps %s, not a millisecond less', async (_what, ms) => {
    vi.useFakeTimers();
    let woke = false;
    const sleeping = systemClock.sleep(ms).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(Math.min(ms, MAX_TIMER_MS) - 1);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(ms - (Math.min(ms, MAX_TIMER_MS) - 1) - 1);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await sleeping;
    expect(woke).toBe(true);
  });

  it('is ended by its signal, also past the first timer', async () => {
    vi.useFakeTimers();
    const stop = new AbortController();
    const sleeping = systemClock.sleep(40 * DAY, stop.signal);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 10);
    stop.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('lets go of the signal once woken: many sleeps on one signal leave no listener on it', async () => {
    vi.useFakeTimers();
    const cycle = new AbortController();
    for (let i = 0; i < 100; i++) {
      const sleeping = systemClock.sleep(100, cycle.signal);
      await vi.advanceTimersByTimeAsync(100);
      await sleeping;
    }
    expect(getEventListeners(cycle.signal, 'abort')).toHaveLength(0);
  });

  it('is not lengthened by the wall clock stepped back meanwhile (NTP, a VM restored)', async () => {
    vi.useFakeTimers();
    let woke = false;
    const sleeping = systemClock.sleep(5_000).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(1_000);
    vi.setSystemTime(Date.now() - 3_600_000);
    await vi.advanceTimersByTimeAsync(3_999);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toBe(true);
    await sleeping;
  });
});
