/**
 * Fires each job on its own cron expression (node-cron 4, a seconds field allowed), never two runs
 * of one job at once, with a random delay of up to `jobs.jitter` so many watchdogs do not hit the
 * API in the same second. The cycles themselves (and waiting for them at shutdown) are the
 * watchdog's: this only decides when.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from './logger.js';

/** One scheduled job: its name and cron expression. */
export interface ScheduledJob {
  name: string;
  cron: string;
}

/** Options of {@link Scheduler}. */
export interface SchedulerOptions {
  jobs: readonly ScheduledJob[];
  /** Largest random delay before a scheduled run (ms); 0 for none. */
  jitterMs: number;
  /** Runs one cycle of a job; a throw is logged. */
  run: (job: string) => Promise<unknown>;
  logger: Logger;
}

/** The job scheduler of one running configuration. */
export class Scheduler {
  readonly #tasks = new Map<string, ScheduledTask>();
  readonly #intervals = new Map<string, number>();
  #started = false;

  constructor(private readonly options: SchedulerOptions) {
    for (const job of options.jobs) this.#intervals.set(job.name, longestGapMs(job.cron));
  }

  /** True between {@link start} and {@link stop}. */
  get running(): boolean {
    return this.#started;
  }

  /** The longest gap between two runs of a job's schedule (ms): readiness allows twice that. */
  intervalMs(job: string): number | undefined {
    return this.#intervals.get(job);
  }

  /** Schedules every job. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    const cronLogger = cronLoggerOf(this.options.logger);
    for (const job of this.options.jobs) {
      // The callback's promise is the execution node-cron waits for: with noOverlap, a tick that
      // comes while the previous cycle still runs is skipped, not queued.
      const task = cron.schedule(job.cron, () => this.#fire(job.name), {
        name: `deploy-watchdog:${job.name}`,
        noOverlap: true,
        maxRandomDelay: this.options.jitterMs,
        logger: cronLogger,
      });
      this.#tasks.set(job.name, task);
    }
    this.options.logger.info({ jobs: Object.fromEntries(this.options.jobs.map((j) => [j.name, j.cron])) }, 'scheduler started');
  }

  /** Stops scheduling; cycles in progress are the caller's to wait for. */
  async stop(): Promise<void> {
    this.#started = false;
    for (const task of this.#tasks.values()) {
      await task.stop();
      await task.destroy();
    }
    this.#tasks.clear();
  }

  #fire(job: string): Promise<void> {
    return this.options.run(job).then(
      () => undefined,
      (err: unknown) => this.options.logger.error({ err, job }, 'job cycle threw'),
    );
  }
}

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
