/**
 * A pass run over and over in the background, sleeping on the injected Clock in between, until
 * stopped: the shape of every loop the daemon keeps beside its cycles (the outbox's delivery,
 * remediation's sending and following, the reading of alerts' context). Never two passes at once: a pass asked for while one runs
 * ({@link BackgroundLoop.runNow}) makes that one go once more when it ends, so whatever the caller
 * just wrote is seen, and both callers get the same answer.
 *
 * A failed pass is followed by a backoff (`lib/backoff.ts`: 1 s doubling to 1 min, with jitter),
 * not by the usual sleep, and the usual sleep is not asked for then: `sleepMs` may read the very
 * store that is failing. A `sleepMs` that throws is a failure too. So a store that is down costs
 * each loop a few passes a minute, never a busy loop that starves the event loop (and SIGTERM).
 */
import { Backoff, LOOP_BACKOFF, type BackoffPolicy } from './backoff.js';
import type { Clock } from './clock.js';
import { clockTimeout } from './clock-timeout.js';

/** What a {@link BackgroundLoop} runs. */
export interface BackgroundLoopOptions<R> {
  clock: Clock;
  /** One pass. `signal` aborts when `stop`'s deadline passes (or the caller's, for `runNow`). */
  pass: (signal: AbortSignal | undefined) => Promise<R> | R;
  /** How long to sleep after a pass that worked; asked after every one (never after a failed one). */
  sleepMs: () => number;
  /** A pass (or `sleepMs`) threw: say so. The loop goes on after a backoff; the next pass tries again. */
  onError: (err: unknown) => void;
  /** The sleeps after failures in a row; default {@link LOOP_BACKOFF}. */
  backoff?: BackoffPolicy;
  /** Adds the answer of a pass run once more (see `runNow`) to the one before; default: the later. */
  merge?: (earlier: R, later: R) => R;
}

/** One background loop: start, wake, stop, and passes on demand that never overlap it. */
export class BackgroundLoop<R = void> {
  readonly #o: BackgroundLoopOptions<R>;
  #running: Promise<R> | undefined;
  #again = false;
  #loop: { done: Promise<void>; abort: AbortController } | undefined;
  #stopping = false;
  #sleep: AbortController | undefined;

  constructor(options: BackgroundLoopOptions<R>) {
    this.#o = options;
  }

  /** True from `start` until `stop` has ended the loop. */
  get started(): boolean {
    return this.#loop !== undefined;
  }

  /**
   * A pass now, or the one under way: asked for while a pass runs, that pass runs once more when
   * it ends (until `signal` aborts), and the answer covers both.
   */
  runNow(signal?: AbortSignal): Promise<R> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const { pass, merge = (_earlier: R, later: R) => later } = this.#o;
    const run = async (): Promise<R> => {
      this.#again = false;
      let total: R = await pass(signal);
      while (this.#again && !signal?.aborted) {
        this.#again = false;
        total = merge(total, await pass(signal));
      }
      return total;
    };
    this.#running = run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** Starts the loop (a first pass at once); a loop already started is left as it is. */
  start(): void {
    if (this.#loop) return;
    this.#stopping = false;
    const abort = new AbortController();
    this.#loop = { abort, done: this.#run(abort.signal) };
  }

  /** Cuts the loop's sleep short: the next pass starts now, or right after the one under way. */
  wake(): void {
    this.#sleep?.abort();
  }

  /**
   * Ends the loop: the pass under way may end by itself for up to `deadlineMs` on the clock (0:
   * not at all), then its signal aborts. Resolves when the loop has ended.
   */
  async stop(deadlineMs: number): Promise<void> {
    const loop = this.#loop;
    if (!loop) return;
    this.#stopping = true;
    this.wake();
    if (deadlineMs <= 0) loop.abort.abort();
    const deadline = clockTimeout(this.#o.clock, deadlineMs > 0 ? deadlineMs : undefined, () => undefined);
    deadline.signal.addEventListener('abort', () => loop.abort.abort(), { once: true });
    await loop.done;
    deadline.dispose();
    if (this.#loop === loop) this.#loop = undefined;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.#o.backoff ?? LOOP_BACKOFF);
    while (!this.#stopping) {
      let wait: number;
      try {
        await this.runNow(signal);
        wait = this.#o.sleepMs();
        backoff.reset();
      } catch (err) {
        this.#o.onError(err);
        wait = backoff.failed();
      }
      if (this.#stopping) break;
      const sleep = new AbortController();
      this.#sleep = sleep;
      await this.#o.clock.sleep(wait, sleep.signal).catch((err: unknown) => {
        // Woken early (wake() or stop()) is the one expected end; anything else is said, not taken for it.
        if (!sleep.signal.aborted) this.#o.onError(err);
      });
    }
  }
}
