/** What {@link raceAbort} answers when the signal fired first. */
export const ABORTED = Symbol('aborted');

/**
 * Waits for `work`, or answers {@link ABORTED} as soon as the signal fires, so a stopping daemon
 * does not wait on a slow Slack or SMTP server. The work itself runs on until its own timeout:
 * neither @slack/webhook nor nodemailer takes a signal.
 */
export function raceAbort<T>(work: Promise<T>, signal?: AbortSignal): Promise<T | typeof ABORTED> {
  if (!signal) return work;
  if (signal.aborted) {
    // The work was already started by the caller; keep its late failure from being unhandled.
    work.catch(() => undefined);
    return Promise.resolve(ABORTED);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      resolve(ABORTED);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
