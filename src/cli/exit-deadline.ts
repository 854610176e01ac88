/**
 * The last word of a stop: once a stop was asked for, the process is gone within a bound, whatever
 * it is waiting on (a store that hangs, an SMTP server that accepts and never answers, a peer, a
 * socket left open). The daemon's own stop is bounded (`Watchdog.stop`'s deadline); this is the
 * belt for what is not, and for a handle that would keep the process alive after it stopped.
 *
 * A real timer, unref'd: a process that ends by itself is never held up by it. It can fire only
 * because no loop of the daemon spins in microtasks (`lib/background-loop.ts` backs off).
 */
import { EXIT } from './command.js';

/** How long after the stop timeout the process is ended if it has not ended by itself: to close what the stop closes. */
export const STOP_GRACE_MS = 2_000;

/**
 * Ends the process (`process.exit`) `ms` from now unless it has ended: with the exit code already
 * chosen (the command finished, a handle lingered), else 1 (the stop did not finish). `say` is
 * told first, for the log.
 */
export function exitDeadline(ms: number, say: (ms: number) => void): void {
  const timer = setTimeout(() => {
    say(ms);
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.incomplete);
  }, ms);
  timer.unref();
}
