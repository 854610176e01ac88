/**
 * How long to wait after repeated failures: exponential from `baseMs`, capped at `capMs`, with
 * jitter taken off so replicas and loops that failed together (a database outage fails them all at
 * once) do not retry in step. One rule for every loop of the daemon (`BackgroundLoop`, the Socket
 * Mode receiver, the leader election's follower, the outbox's per-message retries), so an outage
 * costs each of them a few passes a minute instead of a busy loop.
 */

/** The shape of a backoff: where it starts, where it stops growing, how much jitter. */
export interface BackoffPolicy {
  /** The wait after the first failure (before jitter). */
  baseMs: number;
  /** The longest wait, however many failures (before jitter; jitter only shortens it). */
  capMs: number;
  /** The share of the wait that jitter may take off: 0 none, 0.5 (default) up to half, 1 all of it. */
  jitter?: number;
  /** Uniform in [0, 1); injectable so tests know the waits. Default Math.random. */
  random?: () => number;
}

/** The loops' default: 1 s doubling to 1 min, up to half taken off. */
export const LOOP_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 60_000 };

/**
 * The wait after the `failures`th failure in a row (1 for the first): `baseMs * 2^(failures-1)`
 * capped at `capMs`, less up to `jitter` of it. Never negative, never above `capMs`.
 */
export function backoffDelay(failures: number, policy: BackoffPolicy): number {
  const { baseMs, capMs, jitter = 0.5, random = Math.random } = policy;
  // 2 ** 40 already exceeds any sane cap; stops Infinity creeping in on a very long outage.
  const exponent = Math.min(Math.max(0, failures - 1), 40);
  const full = Math.min(capMs, baseMs * 2 ** exponent);
  const share = Math.min(1, Math.max(0, jitter));
  // random() near 1 keeps the whole wait, 0 takes off the whole share (the outbox's tests count on 1 = no jitter).
  return Math.max(0, Math.round(full * (1 - share * (1 - random()))));
}

/** A run of failures: each `failed()` answers the next wait; a success `reset()`s it. */
export class Backoff {
  readonly #policy: BackoffPolicy;
  #failures = 0;

  constructor(policy: BackoffPolicy = LOOP_BACKOFF) {
    this.#policy = policy;
  }

  /** Failures in a row so far (0: the last attempt worked, or none was made). */
  get failures(): number {
    return this.#failures;
  }

  /** One more failure: how long to wait before the next attempt. */
  failed(): number {
    this.#failures += 1;
    return backoffDelay(this.#failures, this.#policy);
  }

  /** A success: the next failure waits `baseMs` again. */
  reset(): void {
    this.#failures = 0;
  }
}
