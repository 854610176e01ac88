/**
 * A job's read that takes longer than its schedule runs to its end; the ticks that come meanwhile
 * are skipped. This counts them (`deploy_watchdog_job_overruns_total`) and says so once per
 * overrun, at its first skipped tick, not at every one: a storm that makes the runs read take a
 * minute on a 2-second schedule is one warning, not thirty.
 */
import type { Clock } from '../lib/clock.js';
import { formatDuration } from '../lib/format-duration.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';

/** The `component` its lines are bound with: the demo raises its level to keep them off its screen. */
export const OVERRUNS_COMPONENT = 'job-overruns';

/** The overruns of one scheduler's jobs. */
export class JobOverruns {
  /** The reads in progress, by job: when each started, how many ticks it has overrun, whether that was said. */
  readonly #running = new Map<string, { startedAt: number; skipped: number; said: boolean }>();

  constructor(
    private readonly deps: { clock: Clock; logger: Logger; metrics?: Pick<Metrics, 'jobOverruns'> | undefined },
  ) {}

  /** A read of `job` starts. */
  started(job: string): void {
    this.#running.set(job, { startedAt: this.deps.clock.now(), skipped: 0, said: false });
  }

  /**
   * A tick of `job` came while its read still runs: skipped, counted, and said at the first tick
   * by which the read has run for at least `intervalMs` (its schedule's gap). A tick that comes
   * sooner (a first cycle started between two slots) is no overrun of the schedule: not said.
   */
  skipped(job: string, intervalMs?: number): void {
    this.deps.metrics?.jobOverruns.inc({ source: job });
    const run = this.#running.get(job);
    if (!run) return;
    run.skipped++;
    const runningFor = this.deps.clock.now() - run.startedAt;
    if (run.said || (intervalMs !== undefined && runningFor < intervalMs)) return;
    run.said = true;
    this.deps.logger.warn(
      { job, runningForMs: runningFor },
      `the ${job} read has taken ${formatDuration(runningFor, 'seconds')}, longer than its schedule: it runs to its end, and its ticks are skipped until then (deploy_watchdog_job_overruns_total)`,
    );
  }

  /** The read of `job` is over. */
  finished(job: string): void {
    const run = this.#running.get(job);
    this.#running.delete(job);
    if (!run || run.skipped === 0) return;
    const tookMs = this.deps.clock.now() - run.startedAt;
    this.deps.logger.debug({ job, tookMs, skipped: run.skipped }, 'overrunning read finished');
  }
}
