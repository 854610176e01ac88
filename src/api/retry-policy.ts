/**
 * The retry rules of the API client, in one place (like Alertmanager's `Retrier`): which failed
 * attempt is tried again, after how long, and why not otherwise. Every decision carries a named
 * reason, which the client logs.
 */
import { ApiCallError, ApiError, ApiResponseError, ApiTransportError } from './errors.js';

/** Tunables of a {@link RetryPolicy}; the defaults suit a daemon, tests pass small delays. */
export interface RetryPolicyOptions {
  /** Retries of a read after the first attempt; default 3. Changes are never retried. */
  maxRetries?: number;
  /** First backoff cap; doubles per attempt. Default 500 ms. */
  baseDelayMs?: number;
  /** Largest backoff. Default 15 s. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for (the call fails instead). Default 60 s. */
  maxRetryAfterMs?: number;
  /** Random number in [0, 1) for the jitter; inject a seeded one for reproducible waits. */
  random?: () => number;
}

/** Why a failed attempt is tried again. */
export type RetryReason = 'rate_limited' | 'server_error' | 'timeout' | 'connection';
/** Why a failed attempt is final. */
export type GiveUpReason =
  'change_not_retried' | 'not_retryable' | 'attempts_exhausted' | 'past_deadline' | 'retry_after_too_long';

/** The decision on one failed attempt. */
export type RetryDecision =
  { retry: true; reason: RetryReason; delayMs: number } | { retry: false; reason: GiveUpReason };

/** What the policy needs to know about the failed attempt. */
export interface RetryContext {
  kind: 'read' | 'change';
  error: ApiCallError;
  /** Attempts made so far, counting the one that failed (1 after the first). */
  attempt: number;
  /** Clock time now, and the caller's deadline for the whole call (if any). */
  now: number;
  deadline?: number;
}

/**
 * Reads are retried on 429 (after `Retry-After` when given), on 5xx (an HTML 502 from a proxy
 * included), on timeouts and on connection errors, with exponential backoff and full jitter,
 * up to `maxRetries` and never past the deadline. Other 4xx, malformed 2xx answers, an abort or
 * a passed deadline are final. A change is never retried: the service may have acted on it, and
 * only the caller, who owns the idempotency key, may send it again.
 */
export class RetryPolicy {
  readonly maxRetries: number;
  readonly #base: number;
  readonly #max: number;
  readonly #maxRetryAfter: number;
  readonly #random: () => number;

  constructor(options: RetryPolicyOptions = {}) {
    this.maxRetries = options.maxRetries ?? 3;
    this.#base = options.baseDelayMs ?? 500;
    this.#max = options.maxDelayMs ?? 15_000;
    this.#maxRetryAfter = options.maxRetryAfterMs ?? 60_000;
    this.#random = options.random ?? Math.random;
  }

  /** Decides whether the failed attempt is tried again, and after how long. */
  decide(ctx: RetryContext): RetryDecision {
    const reason = retryableReason(ctx.error);
    if (reason === undefined) return { retry: false, reason: 'not_retryable' };
    if (ctx.kind === 'change') return { retry: false, reason: 'change_not_retried' };
    if (ctx.attempt > this.maxRetries) return { retry: false, reason: 'attempts_exhausted' };
    const { error } = ctx;
    const retryAfter = error instanceof ApiError || error instanceof ApiResponseError ? error.retryAfterMs : undefined;
    let delayMs: number;
    if (retryAfter !== undefined) {
      if (retryAfter > this.#maxRetryAfter) return { retry: false, reason: 'retry_after_too_long' };
      delayMs = retryAfter;
    } else {
      // Full jitter: spreads the retries of many clients instead of synchronising them.
      const cap = Math.min(this.#max, this.#base * 2 ** (ctx.attempt - 1));
      delayMs = Math.floor(this.#random() * cap);
    }
    if (ctx.deadline !== undefined && ctx.now + delayMs >= ctx.deadline)
      return { retry: false, reason: 'past_deadline' };
    return { retry: true, reason, delayMs };
  }

  /**
   * How long every request of the client should hold back after this failure: the `Retry-After` of
   * a 429 (capped at `maxRetryAfterMs`, so a wild header cannot stall the daemon), whether or not
   * the failed call itself is retried: the service's wish is about the token, not one request.
   */
  pauseAfter(error: ApiCallError): number | undefined {
    if (!(error instanceof ApiError || error instanceof ApiResponseError) || error.status !== 429) return undefined;
    const wait = error.retryAfterMs;
    return wait === undefined || wait <= 0 ? undefined : Math.min(wait, this.#maxRetryAfter);
  }
}

function retryableReason(error: ApiCallError): RetryReason | undefined {
  if (error instanceof ApiError || error instanceof ApiResponseError) {
    if (error.status === 429) return 'rate_limited';
    if (error.status >= 500) return 'server_error';
    return undefined;
  }
  if (error instanceof ApiTransportError && (error.reason === 'timeout' || error.reason === 'connection'))
    return error.reason;
  return undefined;
}
