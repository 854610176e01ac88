/**
 * Fires each job on its own cron expression (node-cron 4, a seconds field allowed), never two runs
 * of one job at once, with a random delay of up to `jobs.jitter` so many watchdogs do not hit the
 * API in the same second. The cycles themselves (and waiting for them at shutdown) are the
 * watchdog's: this only decides when.
 *
 * The tick source is a dependency ({@link ScheduleFn}, node-cron by default), and "never two runs
 * at once" is the scheduler's own rule (a tick while the job's cycle runs is skipped, and counted
 * as an overrun: `job-overruns.ts`), so both can be tested with ticks given by hand instead of
 * waiting on the wall clock. A cycle is never cut for overrunning its schedule: it runs to its end.
 */
import cron from 'node-cron';
import { performance } from 'node:perf_hooks';
import { clockWentBack, warnClockWentBack } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { JobOverruns } from './job-overruns.js';

/** A schedule started by a {@link ScheduleFn}. */
export interface ScheduleHandle {
  /** No more ticks after this resolves. */
  stop(): Promise<void>;
}

/**
 * Calls `tick` on each time of the cron expression (after up to `jitterMs` of random delay); the
 * scheduler's clock. The promise `tick` returns is the run in progress. `slot` is the time of the
 * schedule the tick is for (epoch ms, before the delay); a tick given without one is for now.
 */
export type ScheduleFn = (
  expression: string,
  tick: (slot?: number) => Promise<void>,
  options: { name: string; jitterMs: number; logger: Logger },
) => ScheduleHandle;

/** Options of {@link Scheduler}. */
export interface SchedulerOptions {
  /** The jobs: each its name and cron expression. */
  jobs: readonly { name: string; cron: string }[];
  /** Largest random delay before a scheduled run (ms); 0 for none. */
  jitterMs: number;
  /** Runs one cycle of a job for the time of its schedule `slot` (epoch ms, wall clock); a throw is logged. */
  run: (job: string, slot: number) => Promise<unknown>;
  logger: Logger;
  /** The tick source; default node-cron ({@link cronSchedule}). */
  schedule?: ScheduleFn;
  /** Counts and tells the ticks skipped while a job's cycle still runs; absent: a debug line each. */
  overruns?: JobOverruns;
}

/** The job scheduler of one running configuration. */
export class Scheduler {
  readonly #tasks = new Map<string, ScheduleHandle>();
  readonly #intervals = new Map<string, number>();
  /** Jobs whose cycle is running now: a tick for one of them is skipped, not queued. */
  readonly #busy = new Set<string>();
  #started = false;
  /** Date.now() − performance.now() when last looked at: it falls when the wall clock is stepped back. */
  #wallOffset = 0;
  #stepWatch: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: SchedulerOptions) {
    for (const job of options.jobs) this.#intervals.set(job.name, longestGapMs(job.cron));
  }

  /** The longest gap between two runs of a job's schedule (ms): readiness allows twice that. */
  intervalMs(job: string): number | undefined {
    return this.#intervals.get(job);
  }

  /** Schedules every job. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#scheduleAll();
    this.#wallOffset = Date.now() - performance.now();
    this.#stepWatch = setInterval(() => this.#rescheduleAfterStepBack(), 5_000).unref();
    this.options.logger.info(
      { jobs: Object.fromEntries(this.options.jobs.map((j) => [j.name, j.cron])) },
      'scheduler started',
    );
  }

  #scheduleAll(): void {
    const schedule = this.options.schedule ?? cronSchedule;
    for (const job of this.options.jobs) {
      const task = schedule(job.cron, (slot) => this.#fire(job.name, slot ?? Date.now()), {
        name: `deploy-watchdog:${job.name}`,
        jitterMs: this.options.jitterMs,
        logger: this.options.logger,
      });
      this.#tasks.set(job.name, task);
    }
  }

  /**
   * node-cron arms each job's timer for its next time on the wall clock: a clock stepped back (NTP,
   * a VM restored) would hold every job for the step. Scheduled again from the new time, they go on.
   */
  #rescheduleAfterStepBack(): void {
    const [before, now] = [this.#wallOffset, Date.now()];
    this.#wallOffset = now - performance.now();
    if (!clockWentBack(before, this.#wallOffset, 0)) return;
    warnClockWentBack(this.options.logger, 'the jobs are scheduled again from now', before + performance.now(), now);
    for (const task of this.#tasks.values()) void task.stop();
    this.#scheduleAll();
  }

  /**
   * A cycle of `job` now, outside its schedule (the daemon's first cycles), under the same rule: a
   * tick that comes while it runs is an overrun, skipped.
   */
  runNow(job: string): Promise<void> {
    return this.#fire(job, Date.now());
  }

  /** Stops scheduling; cycles in progress are the caller's to wait for. */
  async stop(): Promise<void> {
    this.#started = false;
    clearInterval(this.#stepWatch);
    for (const task of this.#tasks.values()) await task.stop();
    this.#tasks.clear();
  }

  async #fire(job: string, slot: number): Promise<void> {
    if (!this.#started) return;
    const { overruns } = this.options;
    if (this.#busy.has(job)) {
      if (overruns) overruns.skipped(job, this.#intervals.get(job));
      else this.options.logger.debug({ job }, 'tick skipped: the previous cycle still runs');
      return;
    }
    this.#busy.add(job);
    overruns?.started(job);
    try {
      await this.options.run(job, slot);
    } catch (err) {
      this.options.logger.error({ err, job }, 'job cycle threw');
    } finally {
      this.#busy.delete(job);
      overruns?.finished(job);
    }
  }
}

/**
 * The default tick source: node-cron, every tick handed on, so the scheduler sees (and counts) the
 * ones that come during a run; node-cron's own noOverlap would drop them unseen.
 */
export const cronSchedule: ScheduleFn = (expression, tick, options) => {
  const task = cron.schedule(expression, (context) => tick(context.date.getTime()), {
    name: options.name,
    maxRandomDelay: options.jitterMs,
    logger: cronLoggerOf(options.logger),
  });
  return {
    async stop() {
      await task.stop();
      await task.destroy();
    },
  };
};

/** The longest gap between the next few runs of a cron expression (ms). */
function longestGapMs(expression: string): number {
  const task = cron.createTask(expression, () => undefined);
  try {
    const runs = task.getNextRuns(12).map((d) => d.getTime());
    let longest = 0;
    for (let i = 1; i < runs.length; i++) longest = Math.max(longest, runs[i]! - runs[i - 1]!);
    return longest;
  } finally {
    void task.destroy();
  }
}

/** node-cron's own messages (missed runs, overlaps) through our logger, quietly. */
function cronLoggerOf(logger: Logger) {
  const log = logger.child({ stage: 'scheduler' });
  return {
    info: (message: string) => log.debug(message),
    warn: (message: string) => log.debug(message),
    error: (message: string | Error, err?: Error) => log.warn({ err: err ?? message }, 'scheduler error'),
    debug: (message: string | Error) => log.trace(String(message)),
  };
}
