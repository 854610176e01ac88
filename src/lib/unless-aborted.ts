/**
 * A read whose failure is not fatal (a lookup, a probe of what the token can see): what `fallback`
 * makes of its failure, unless `signal` has aborted, when the failure is thrown on, so a caller
 * that is stopping never goes on with a fallback.
 */
export function unlessAborted<T, F>(work: Promise<T>, signal: AbortSignal | undefined, fallback: (err: unknown) => F) {
  return work.catch((err: unknown) => (signal?.aborted ? Promise.reject(err as Error) : fallback(err)));
}
