/**
 * The client-side rate limit: a token bucket, the one place that decides when a request may go.
 * All waits go through the injected Clock, so a ManualClock drives it in tests.
 *
 * The reference does not state the service's rate limit, so the bucket also learns it: a 429 says
 * "slower", so {@link RateLimiter.backOff} halves the rate in force and pauses every request, for
 * the `Retry-After` when there is one, else 1 s, doubling with each such 429 in a row, up to a minute
 * (the 429s of requests sent before that pause are the same burst: one step);
 * after a minute without one the rate doubles back, up to the configured one.
 */
import { clockWentBack, type Clock } from '../lib/clock.js';

/** Options of a {@link RateLimiter}. */
export interface RateLimiterOptions {
  /** Sustained rate; `Infinity` turns the limit off. */
  requestsPerSecond: number;
  clock: Clock;
}

/** The outcome of {@link RateLimiter.acquire}: a named reason, not a boolean. */
export type AcquireOutcome = 'acquired' | 'past_deadline';

/** What {@link RateLimiter.backOff} did. */
export interface BackOff {
  /** How long every request is held back from now. */
  pauseMs: number;
  /** The rate in force from now (requests per second). */
  requestsPerSecond: number;
  /** Whether this 429 lowered the configured rate: the first of a spell (the rate had come all the way back). */
  first: boolean;
}

/** The rate a limit that was off starts from after its first 429. */
const UNLIMITED_BACKOFF_START = 10;
/** The lowest rate backing off goes down to. */
const MIN_RATE = 0.2;
/** The first pause after a 429 without `Retry-After`; it doubles with each one in a row. */
const FIRST_PAUSE_MS = 1_000;
/** The longest pause. */
const MAX_PAUSE_MS = 60_000;
/** How long without a 429 before the rate doubles back toward the configured one. */
const RECOVERY_MS = 60_000;

/**
 * Token bucket with reservations: each `acquire` takes a token at once (the count may go below
 * zero) and waits until its token would have been refilled. Taking first and waiting after keeps
 * concurrent callers in arrival order without a queue. `pauseUntil` holds every caller back until
 * a time the service named in `Retry-After`, since a 429 is about the token, not one request.
 */
export class RateLimiter {
  /** The configured rate, the ceiling of the rate in force. */
  readonly #configured: number;
  /** Requests that may go at once after a quiet spell: a second's worth at the configured rate, at least one. */
  readonly #burst: number;
  readonly #clock: Clock;
  /** The rate in force: the configured one, or lower after 429s without `Retry-After`. */
  #rate: number;
  #tokens: number;
  #last: number;
  #pausedUntil = 0;
  /** Pauses begun so far: a request whose wait for a token spanned the start of one queues again. */
  #pauses = 0;
  /** 429s in a row, one per burst (reset by a quiet minute, as the rate steps back up). */
  #strikes = 0;
  /** When the rate last moved (a back-off or a step of recovery). */
  #movedAt = 0;
  /** The longest pause set so far: the schedule (`#last`, `#pausedUntil`) is never further ahead. */
  #longestPauseMs = MAX_PAUSE_MS;

  constructor(options: RateLimiterOptions) {
    if (!(options.requestsPerSecond > 0)) throw new RangeError('requestsPerSecond must be > 0');
    this.#configured = options.requestsPerSecond;
    this.#rate = this.#configured;
    this.#burst = Number.isFinite(this.#rate) ? Math.max(1, this.#rate) : 1;
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
    const pauses = this.#pauses;
    this.#clockCheck(now);
    this.#recover(now);
    let wait = Math.max(0, this.#pausedUntil - now);
    if (Number.isFinite(this.#rate)) {
      this.#refill(now);
      this.#tokens -= 1;
      // Tokens count again from the end of a pause (`#last`), so what waited through it goes at the rate, not at once.
      const owed = Math.max(0, this.#last - now) + Math.ceil((-this.#tokens / this.#rate) * 1000);
      if (this.#tokens < 0) wait = Math.max(wait, owed);
    }
    if (notAfter !== undefined && now + wait > notAfter) {
      this.#giveBack();
      return 'past_deadline';
    }
    if (wait > 0) {
      await this.#clock.sleep(wait, signal).catch((err: unknown) => {
        this.#giveBack();
        throw err;
      });
      // A pause began while this waited (another request's 429): its token, of the schedule before
      // it, was forgotten; it queues again behind the pause instead of going into the same wall.
      if (this.#pauses !== pauses) return this.acquire(signal, notAfter);
    }
    return 'acquired';
  }

  /**
   * Holds every request back until `time` (clock ms), e.g. after a 429 with `Retry-After`. No token
   * is earned meanwhile: the requests that waited through the pause leave at the rate after it, or
   * they would all leave at its end, a burst into the same wall.
   */
  pauseUntil(time: number): void {
    const now = this.#clock.now();
    this.#longestPauseMs = Math.max(this.#longestPauseMs, time - now);
    this.#refill(now);
    if (time > this.#pausedUntil) {
      this.#pausedUntil = time;
      // The tokens the requests waiting now were promised are forgotten: they queue again after it.
      this.#pauses += 1;
      this.#tokens = Math.max(this.#tokens, 0);
    }
    this.#last = Math.max(this.#last, this.#pausedUntil);
  }

  /**
   * A 429: pause every request (for `retryAfterMs`, the wait the service asked for, else as the
   * file comment says) and halve the rate in force. A service that names its wait is slower than
   * the rate too: resuming at the same rate would meet the same wall a moment after the pause.
   */
  backOff(retryAfterMs?: number): BackOff {
    const now = this.#clock.now();
    this.#clockCheck(now);
    // Answered while a pause holds every request back, it was sent before the pause: the same
    // burst (requests in flight side by side meet one wall), one step, not one per request.
    if (now < this.#pausedUntil) {
      if (retryAfterMs !== undefined) this.pauseUntil(now + retryAfterMs);
      return { pauseMs: this.#pausedUntil - now, requestsPerSecond: this.#rate, first: false };
    }
    const first = this.#rate === this.#configured;
    this.#refill(now);
    this.#strikes += 1;
    const from = Number.isFinite(this.#rate) ? this.#rate : UNLIMITED_BACKOFF_START;
    this.#rate = Math.max(MIN_RATE, from / 2);
    this.#movedAt = now;
    const pauseMs = retryAfterMs ?? Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (this.#strikes - 1));
    this.pauseUntil(now + pauseMs);
    // The pause stands for one token, and at the lower rate the bucket holds no more: a full one
    // would send a burst into the same wall.
    this.#tokens = 1;
    return { pauseMs, requestsPerSecond: this.#rate, first };
  }

  /** Doubles the rate back, a step a {@link RECOVERY_MS} without a back-off, up to the configured one. */
  #recover(now: number): void {
    if (this.#rate === this.#configured || now - this.#movedAt < RECOVERY_MS) return;
    this.#refill(now);
    const next = this.#rate * 2;
    // An unlimited rate comes back once it is well past where backing off started.
    const home =
      next >= this.#configured || (!Number.isFinite(this.#configured) && next >= UNLIMITED_BACKOFF_START * 4);
    this.#rate = home ? this.#configured : next;
    this.#movedAt = now;
    // A quiet minute ends the streak: a 429 at the rate stepped up starts its pauses from 1 s again.
    this.#strikes = 0;
  }

  /**
   * A schedule further ahead than the longest pause means the clock went back (NTP, a VM
   * restored): the pause and the tokens' schedule start again from now, or every request would
   * wait the step out (the cycles' reads with it).
   */
  #clockCheck(now: number): void {
    if (clockWentBack(Math.max(this.#last, this.#pausedUntil, this.#movedAt), now, this.#longestPauseMs)) {
      [this.#last, this.#pausedUntil, this.#movedAt] = [now, Math.min(this.#pausedUntil, now), now];
    }
  }

  #refill(now: number): void {
    const elapsed = Math.max(0, now - this.#last);
    // Never back: during a pause `#last` is its end, from which tokens are earned again.
    this.#last = Math.max(this.#last, now);
    if (!Number.isFinite(this.#rate)) return;
    // Slowed down, the bucket holds no more than a second's worth: the service said "fewer at once".
    const cap = this.#rate < this.#configured ? Math.min(this.#burst, Math.max(1, this.#rate)) : this.#burst;
    this.#tokens = Math.min(cap, this.#tokens + (elapsed * this.#rate) / 1000);
  }

  #giveBack(): void {
    if (Number.isFinite(this.#rate)) this.#tokens = Math.min(this.#burst, this.#tokens + 1);
  }
}
