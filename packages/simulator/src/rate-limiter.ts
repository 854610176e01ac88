/**
 * The service's rate limit (reference §8: "a request over the rate limit gives rate_limited";
 * the thresholds are not shown): a token bucket per bearer token. A refused request takes nothing
 * from its bucket.
 *
 * Time is the simulator's (`clock.now()` plus what `advance` added), like every other time of the
 * simulator: with the system clock (the standalone command) buckets refill in real time; with a
 * ManualClock they refill only when the test moves time (clock.advance or control.advance), so a
 * test sees exactly `burst` requests pass and the rest refused.
 */

/** How the simulator limits the request rate. */
export interface RateLimitSpec {
  /** Requests per second each token may make in the long run; > 0 (fractions allowed). */
  rps: number;
  /** Requests a token may make at once after a quiet spell; default max(1, ceil(rps)). */
  burst?: number;
  /** How a 429 says when to come back: seconds (default), an HTTP date, or not at all. */
  retryAfter?: 'seconds' | 'date' | 'none';
}

/** A refusal: how long until the token's bucket holds a whole request again. */
export interface RateRefusal {
  retryAfterSeconds: number;
}

/** The RateLimitSpec forms of Retry-After. */
export const RETRY_AFTER_FORMS = ['seconds', 'date', 'none'] as const;

/** Checks a rate limit spec; throws an Error naming the bad field. */
export function checkRateLimit(spec: RateLimitSpec): Required<RateLimitSpec> {
  if (!(typeof spec.rps === 'number' && Number.isFinite(spec.rps) && spec.rps > 0))
    throw new Error(`rateLimit.rps must be a number above 0, got ${String(spec.rps)}`);
  const burst = spec.burst ?? Math.max(1, Math.ceil(spec.rps));
  if (!Number.isInteger(burst) || burst < 1)
    throw new Error(`rateLimit.burst must be an integer of at least 1, got ${String(spec.burst)}`);
  const retryAfter = spec.retryAfter ?? 'seconds';
  if (!RETRY_AFTER_FORMS.includes(retryAfter))
    throw new Error(
      `rateLimit.retryAfter must be one of ${RETRY_AFTER_FORMS.join(', ')}, got ${String(spec.retryAfter)}`,
    );
  return { rps: spec.rps, burst, retryAfter };
}

/** Token buckets per bearer token; none while no limit is set. */
export class RateLimiter {
  private spec: Required<RateLimitSpec> | null = null;
  /** Only tokens the simulator accepts get a bucket, so this stays as small as the token list. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(spec: RateLimitSpec | null) {
    this.set(spec);
  }

  /** The limit in force (defaults filled in), or null. */
  get current(): Required<RateLimitSpec> | null {
    return this.spec;
  }

  /** Sets or removes the limit; every bucket starts full again. */
  set(spec: RateLimitSpec | null): void {
    this.spec = spec === null ? null : checkRateLimit(spec);
    this.buckets.clear();
  }

  /** Takes one request from the token's bucket at simulator time `now`; a refusal when it is empty. */
  take(token: string, now: number): RateRefusal | null {
    const spec = this.spec;
    if (!spec) return null;
    const bucket = this.buckets.get(token) ?? { tokens: spec.burst, at: now };
    // Time never runs backwards here, even if the system clock is set back.
    bucket.tokens = Math.min(spec.burst, bucket.tokens + (Math.max(0, now - bucket.at) * spec.rps) / 1000);
    bucket.at = Math.max(bucket.at, now);
    this.buckets.set(token, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return null;
    }
    return { retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / spec.rps)) };
  }
}
