/**
 * The tests' clock (and the benchmarks' that run the daemon on simulated time): nothing in src/
 * makes one. The daemon takes any {@link Clock} and runs on the system's.
 */
import type { Clock } from '../../src/lib/clock.js';

/**
 * A clock whose time moves only when told to. `sleep` resolves when `advance` passes its deadline,
 * so code that waits can be driven deterministically.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: { until: number; resolve: () => void }[] = [];
  private readonly jumpListeners = new Set<() => void>();

  constructor(start: number | string = Date.UTC(2026, 10, 1, 12, 0, 0)) {
    this.current = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal!.reason);
      };
      // Woken, the sleeper lets go of the signal: a cycle's signal outlives thousands of waits (the
      // rate limit's, one per request), and each listener left on it was a leak Node warned of.
      const sleeper = {
        until: this.current + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * The earliest time a sleeper waits for, or undefined when none sleeps. A test that drives a
   * background loop waits until the loop is asleep (its wake-up within reach) before moving time:
   * time moved while the loop was still busy would not wake it.
   */
  nextWakeAt(): number | undefined {
    return this.sleepers.length === 0 ? undefined : Math.min(...this.sleepers.map((s) => s.until));
  }

  onJump(listener: () => void): () => void {
    this.jumpListeners.add(listener);
    return () => this.jumpListeners.delete(listener);
  }

  /** Moves time forward by `ms` and wakes every sleeper whose deadline has passed. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /**
   * Moves time back by `ms`, as NTP or a restored VM steps a wall clock. A sleeper still wakes after
   * the time it asked for, as timers do: they count elapsed time, not the wall's.
   */
  stepBack(ms: number): void {
    this.current -= ms;
    for (const s of this.sleepers) s.until -= ms;
    for (const listener of this.jumpListeners) listener();
  }

  /** Sets the time (never backwards) and wakes due sleepers. */
  set(time: number | string): void {
    const next = typeof time === 'string' ? Date.parse(time) : time;
    this.current = Math.max(this.current, next);
    for (const listener of this.jumpListeners) listener();
    const due = this.sleepers.filter((s) => s.until <= this.current);
    this.sleepers = this.sleepers.filter((s) => s.until > this.current);
    for (const s of due) s.resolve();
  }
}
