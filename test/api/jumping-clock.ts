/**
 * A test clock whose `sleep` jumps time forward at once and records the wait: the client's retry
 * and rate-limit waits become instant and exact, and a test can assert how long the client chose to
 * wait (a decision), never how long something took (a timing).
 */
import type { Clock } from '../../src/lib/clock.js';

/** See the file comment. */
export class JumpingClock implements Clock {
  /** Every wait asked for, in order. */
  readonly sleeps: number[] = [];
  private current: number;

  constructor(start: number | string = '2026-11-01T12:00:00Z') {
    this.current = typeof start === 'string' ? Date.parse(start) : start;
  }

  now(): number {
    return this.current;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.sleeps.push(ms);
    this.current += Math.max(0, ms);
    return Promise.resolve();
  }
}
