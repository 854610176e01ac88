/**
 * The client-side rate limit: a token bucket, the one place that decides when a request may go.
 * All waits go through the injected Clock, so a ManualClock drives it in tests.
 */
import type { Clock } from '../lib/clock.js';

/** Options of a {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Sustained rate; `Infinity` turns the limit off. */
  requestsPerSecond: number;
  /** Requests that may go at once after a quiet spell; default `max(1, requestsPerSecond)`. */
  burst?: number;
  clock: Clock;
}

/** The outcome of {@link RateLimiter.acquire}: a named reason, not a boolean. */
export type AcquireOutcome = 'acquired' | 'past_deadline';

/**
 * Token bucket with reservations: each `acquire` takes a token at once (the count may go below
 * zero) and waits until its token would have been refilled. Taking first and waiting after keeps
 * concurrent callers in arrival order without a queue. `pauseUntil` holds every caller back until
 * a time the service named in `Retry-After`, since a 429 is about the token, not one request.
 */
export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;
  #pausedUntil = 0;

  constructor(options: RateLimiterOptions) {
    if (!(options.requestsPerSecond > 0)) throw new RangeError('requestsPerSecond must be > 0');
    this.#rate = options.requestsPerSecond;
    this.#burst = options.burst ?? Math.max(1, Number.isFinite(this.#rate) ? this.#rate : 1);
    if (!(this.#burst >= 1)) throw new RangeError('burst must be >= 1');
    this.#clock = options.clock;
    this.#tokens = this.#burst;
    this.#last = this.#clock.now();
  }

  /**
   * Waits for a token. Answers `past_deadline` without waiting (and without keeping the token)
   * when the wait would end after `notAfter`; rejects with the signal's reason when it aborts.
   */
  async acquire(signal?: AbortSignal, notAfter?: number): Promise<AcquireOutcome> {
    const now = this.#clock.now();
    let wait = Math.max(0, this.#pausedUntil - now);
    if (Number.isFinite(this.#rate)) {
      this.#refill(now);
      this.#tokens -= 1;
      if (this.#tokens < 0) wait = Math.max(wait, Math.ceil((-this.#tokens / this.#rate) * 1000));
    }
    if (notAfter !== undefined && now + wait > notAfter) {
      this.#giveBack();
      return 'past_deadline';
    }
    if (wait > 0) {
      try {
        await this.#clock.sleep(wait, signal);
      } catch (err) {
        this.#giveBack();
        throw err;
      }
    }
    return 'acquired';
  }

  /** Holds every request back until `time` (clock ms), e.g. after a 429 with `Retry-After`. */
  pauseUntil(time: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, time);
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#last);
    this.#tokens = Math.min(this.#burst, this.#tokens + (elapsed * this.#rate) / 1000);
    this.#last = now;
  }

  #giveBack(): void {
    if (Number.isFinite(this.#rate)) this.#tokens = Math.min(this.#burst, this.#tokens + 1);
  }
}
