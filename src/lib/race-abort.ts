/**
 * Waiting for work that cannot itself be cancelled (a promise others share, a library call that
 * takes no signal), but only until a signal aborts: then the wait ends with what `aborted` gives
 * (or throws), and the work's late failure is kept from being unhandled.
 */
export function raceAbort<T, A>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  aborted: (reason: unknown) => A,
): Promise<T | A> {
  if (!signal) return work;
  const end = (): Promise<A> => {
    work.catch(() => undefined);
    return new Promise<A>((resolve) => resolve(aborted(signal.reason)));
  };
  if (signal.aborted) return end();
  return new Promise<T | A>((resolve, reject) => {
    const onAbort = () => end().then(resolve, reject);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
