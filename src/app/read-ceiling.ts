/**
 * The hard bound of one job's read (`jobs.read_ceiling`): a read longer than its schedule is not
 * cut (it finishes, and the ticks it overran are skipped: `job-overruns.ts`); only a read past this
 * ceiling is, and what it read before still announces new problems, never resolves one
 * (`partial-cycle.ts`). The ceiling is far above any honest read: it is there for hostile answers
 * (a list that never ends, an answer that trickles), beside the bounds on items and bytes.
 */
import type { Config } from '../config/load-config.js';
import { formatDuration } from '../lib/format-duration.js';

/** `jobs.read_ceiling` when neither it nor the deprecated `jobs.deadline` is given. */
export const DEFAULT_READ_CEILING_MS = 15 * 60_000;

/**
 * A job's read reached its ceiling (`jobs.read_ceiling`): it is incomplete, so it resolves
 * nothing; what it read before may still fire alerts, and the other jobs go on.
 */
export class ReadCeilingError extends Error {
  override readonly name = 'ReadCeilingError';
  constructor(
    readonly job: string,
    readonly ceilingMs: number,
  ) {
    super(
      `the read of ${job} reached its ceiling of ${formatDuration(ceilingMs, 'exact')} (jobs.read_ceiling) and is incomplete`,
    );
  }
}

/**
 * The ceiling of every job's read (ms): `jobs.read_ceiling`, else a duration given to the
 * deprecated `jobs.deadline` (its "auto", the schedule's interval, is no ceiling any more: a read
 * that overruns its schedule finishes), else {@link DEFAULT_READ_CEILING_MS}.
 */
export function readCeilingMs(jobs: Pick<Config['jobs'], 'read_ceiling' | 'deadline'>): number {
  if (jobs.read_ceiling !== undefined) return jobs.read_ceiling;
  if (typeof jobs.deadline === 'number') return jobs.deadline;
  return DEFAULT_READ_CEILING_MS;
}
