/**
 * How long to wait before the next delivery attempt: exponential from `initialMs`, capped at
 * `maxMs`, with up to 20% jitter taken off so channels that failed together do not retry in step.
 */
export function backoff(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  // 2 ** 40 already exceeds any sane max; stops Infinity creeping in on a very long outage.
  const base = Math.min(maxMs, initialMs * 2 ** Math.min(exponent, 40));
  return Math.round(base * (0.8 + 0.2 * random()));
}
