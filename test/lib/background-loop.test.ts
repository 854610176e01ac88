/**
 * The background loop on a ManualClock: a first pass at once, then one per sleep; woken early;
 * never two passes at once; a failed pass does not end it but is followed by a backoff, and
 * `sleepMs` is not asked then (a failing one is a failure too); stop lets a pass end within its
 * deadline and aborts it after.
 */
import { describe, expect, it, vi } from 'vitest';
import { BackgroundLoop } from '../../src/lib/background-loop.js';
import { ManualClock } from '../helpers/manual-clock.js';

const SLEEP = 30_000;

/** A pass that counts its runs and, while `hold` is set, waits until released or aborted. */
function harness(options: { fail?: (n: number) => boolean; sleepMs?: () => number } = {}) {
  const clock = new ManualClock(0);
  const seen = { passes: 0, running: 0, most: 0, aborted: 0, sleepAsked: 0, errors: [] as unknown[] };
  let release: (() => void) | undefined;
  let hold = false;
  const loop = new BackgroundLoop<number>({
    clock,
    sleepMs: () => {
      seen.sleepAsked += 1;
      return (options.sleepMs ?? (() => SLEEP))();
    },
    onError: (err) => seen.errors.push(err),
    merge: (a, b) => a + b,
    // No jitter: the waits are the table's.
    backoff: { baseMs: 1_000, capMs: 60_000, random: () => 1 },
    pass: async (signal) => {
      seen.passes += 1;
      seen.running += 1;
      seen.most = Math.max(seen.most, seen.running);
      try {
        if (hold) {
          await new Promise<void>((resolve, reject) => {
            release = resolve;
            signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          });
        }
        if (options.fail?.(seen.passes)) throw new Error(`pass ${seen.passes} failed`);
        return 1;
      } catch (err) {
        seen.aborted += signal?.aborted ? 1 : 0;
        throw err;
      } finally {
        seen.running -= 1;
      }
    },
  });
  return {
    clock,
    loop,
    seen,
    hold: (on: boolean) => (hold = on),
    release: () => release?.(),
    /** Until the loop sleeps `ms` (its next wake-up within reach of the clock). */
    asleep: (ms = SLEEP) => vi.waitFor(() => expect(clock.nextWakeAt()).toBe(clock.now() + ms)),
  };
}

describe('BackgroundLoop', () => {
  it('runs a first pass at once, then one each time the sleep on the clock ends', async () => {
    const h = harness();
    h.loop.start();
    await h.asleep();
    expect(h.seen.passes).toBe(1);
    h.clock.advance(SLEEP - 1);
    expect(h.seen.passes).toBe(1);
    h.clock.advance(1);
    await vi.waitFor(() => expect(h.seen.passes).toBe(2));
    await h.loop.stop(0);
  });

  it('wake cuts the sleep short', async () => {
    const h = harness();
    h.loop.start();
    await h.asleep();
    h.loop.wake();
    await vi.waitFor(() => expect(h.seen.passes).toBe(2));
    await h.loop.stop(0);
  });

  it('a pass asked for while one runs makes it go once more; both callers get the sum; never two at once', async () => {
    const h = harness();
    h.hold(true);
    const first = h.loop.runNow();
    const second = h.loop.runNow();
    expect(h.seen.passes).toBe(1);
    h.hold(false);
    h.release();
    expect(await first).toBe(2);
    expect(await second).toBe(2);
    expect(h.seen).toMatchObject({ passes: 2, most: 1 });
    // The loop's own pass shares the one under way too.
    h.hold(true);
    const asked = h.loop.runNow();
    h.loop.start();
    h.hold(false);
    h.release();
    expect(await asked).toBe(2);
    await h.asleep();
    expect(h.seen).toMatchObject({ passes: 4, most: 1 });
    await h.loop.stop(0);
  });

  it('a pass that throws is reported, the loop backs off without asking sleepMs, and a success sleeps as usual again', async () => {
    const h = harness({ fail: (n) => n <= 2 });
    h.loop.start();
    await h.asleep(1_000);
    expect(h.seen.errors).toEqual([new Error('pass 1 failed')]);
    h.clock.advance(1_000);
    await vi.waitFor(() => expect(h.seen.passes).toBe(2));
    await h.asleep(2_000);
    expect(h.seen.sleepAsked).toBe(0);
    h.clock.advance(2_000);
    await vi.waitFor(() => expect(h.seen.passes).toBe(3));
    await h.asleep();
    expect(h.seen.errors).toHaveLength(2);
    expect(h.seen.sleepAsked).toBe(1);
    await h.loop.stop(0);
  });

  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [6, 32_000],
    [7, 60_000],
    [20, 60_000],
  ])('after %i failed passes in a row the loop sleeps %i ms', async (failures, expected) => {
    const h = harness({ fail: () => true });
    h.loop.start();
    for (let n = 1; n < failures; n++) {
      const wake = await vi.waitFor(() => h.clock.nextWakeAt() ?? expect.fail('not asleep'));
      h.clock.set(wake);
      await vi.waitFor(() => expect(h.seen.passes).toBe(n + 1));
    }
    await h.asleep(expected);
    expect(h.seen.errors).toHaveLength(failures);
    await h.loop.stop(0);
  });

  it('a sleepMs that throws (it reads a store that is down) is reported and the loop backs off, never spins', async () => {
    const h = harness({
      sleepMs: () => {
        throw new Error('The database connection is not open');
      },
    });
    h.loop.start();
    await h.asleep(1_000);
    expect(h.seen).toMatchObject({ passes: 1, sleepAsked: 1 });
    expect(h.seen.errors).toEqual([new Error('The database connection is not open')]);
    h.clock.advance(1_000);
    await h.asleep(2_000);
    expect(h.seen).toMatchObject({ passes: 2, sleepAsked: 2 });
    await h.loop.stop(0);
  });

  it.each([
    ['ends by itself within the deadline: not aborted', 10_000, 'release', 0],
    ['still running at the deadline: aborted then', 10_000, 'advance', 1],
    ['a deadline of 0: aborted at once', 0, 'nothing', 1],
  ] as const)('stop, the pass under way %s', async (_what, deadlineMs, then, aborted) => {
    const h = harness();
    h.hold(true);
    h.loop.start();
    expect(h.seen.running).toBe(1);
    const stopped = h.loop.stop(deadlineMs);
    if (then === 'release') h.release();
    if (then === 'advance') {
      await vi.waitFor(() => expect(h.clock.nextWakeAt()).toBe(deadlineMs));
      h.clock.advance(deadlineMs);
    }
    await stopped;
    expect(h.seen).toMatchObject({ passes: 1, running: 0, aborted });
    expect(h.loop.started).toBe(false);
  });

  it('starts again after a stop; a second start keeps the one loop', async () => {
    const h = harness();
    h.loop.start();
    h.loop.start();
    await h.asleep();
    expect(h.seen.passes).toBe(1);
    await h.loop.stop(0);
    expect(h.loop.started).toBe(false);
    h.loop.start();
    await h.asleep();
    expect(h.seen).toMatchObject({ passes: 2, most: 1 });
    await h.loop.stop(0);
  });
});
