import { formatUtc } from './format-utc.js';
import type { Logger } from './logger.js';

/**
 * Time as the rest of the code sees it. Everything that reads the time or waits takes a Clock,
 * so tests drive time-based rules with a fake clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` (on this clock), or rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `listener` after each jump of the time, and returns what stops it; absent on a clock
   * that runs with the system's and never jumps. A thread that reads the time from Date.now()
   * (the listener's) is told the clock's lead at once (a ManualClock moved by a test).
   */
  onJump?(listener: () => void): () => void;
}

/**
 * The longest delay one Node timer takes (2^31 - 1 ms, about 24.8 days); a longer one fires after
 * 1 ms instead, with only a warning. A monthly job's deadline is longer.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Slack for clocks that differ a little: NTP keeps replicas within milliseconds of each other, and
 * two seconds more absorb a drifting one, so no replica takes another's waits for a step back.
 */
const CLOCK_SKEW_MS = 2_000;

/**
 * The latest "not before" time the program can have set itself by `now`, when it sets waits of at
 * most `longestMs`. One further ahead shows the clock went back since (NTP, a VM restored or moved).
 */
export function latestWaitEnd(now: number, longestMs: number): number {
  return now + longestMs + CLOCK_SKEW_MS;
}

/**
 * Whether a "not before" time set with waits of at most `longestMs` shows the clock went back
 * since: then the wait is over, since honoured it would last the step too. A step shorter than
 * `longestMs` cannot be told from a real wait; it costs at most that.
 */
export function clockWentBack(notBefore: number, now: number, longestMs: number): boolean {
  return notBefore > latestWaitEnd(now, longestMs);
}

/** Says, at warn, that a wait set for `setFor` ends early at `now` ({@link clockWentBack}); `what` names it. */
export function warnClockWentBack(log: Logger, what: string, setFor: number, now: number): void {
  const [at, by] = [formatUtc(setFor, 'iso'), formatUtc(now, 'iso')];
  log.warn({ setFor: at, now: by }, `the clock went back: ${what} (it was set for ${at}, now ${by})`);
}

/**
 * {@link warnClockWentBack} for several waits, set for the times `setFor`, that end early at `now`:
 * said once as "N `what`", with the latest of them; nothing when there are none.
 */
export function warnWaitsEndEarly(log: Logger, what: string, setFor: readonly number[], now: number): void {
  if (setFor.length > 0) warnClockWentBack(log, `${setFor.length} ${what}`, Math.max(...setFor), now);
}

/**
 * The wall clock. A sleep past {@link MAX_TIMER_MS} is waited out in timers of at most that, each
 * measured on the monotonic clock: a wall clock stepped back (NTP, a VM restored) never lengthens it.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const until = performance.now() + Math.max(0, ms);
      let timer: ReturnType<typeof setTimeout>;
      const arm = (left: number) => {
        timer = setTimeout(
          () => {
            const rest = until - performance.now();
            if (rest > 0) return arm(rest);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          Math.min(Math.max(0, left), MAX_TIMER_MS),
        );
      };
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      arm(until - performance.now());
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
