import type { ConfigProblem } from './config-error.js';
import type { Config } from './load-config.js';

/**
 * What a valid configuration says that its author most likely did not mean: said by `validate`,
 * and logged when the daemon starts or reloads, never refused (each can be meant, for a while).
 * - No channel: alerts are recorded and listed by `alerts`, and nobody is told of any.
 * - `jobs.deadline`, deprecated: a read no longer ends at its schedule; its duration is the ceiling.
 */
export function configWarnings(config: Config): ConfigProblem[] {
  const noChannel = config.notify.channels.length === 0 && {
    path: 'notify.channels',
    message:
      "no channel is configured: alerts are recorded (see `deploy-watchdog alerts`) and nobody is told; add one (type: log writes them to the daemon's log)",
  };
  return [noChannel, jobsDeadlineWarning(config.jobs)].filter((w) => !!w);
}

/** What the deprecated `jobs.deadline` does now, when a config still gives it. */
function jobsDeadlineWarning(jobs: Config['jobs']): ConfigProblem | undefined {
  if (jobs.deadline === undefined) return undefined;
  const why = 'a read that takes longer than its schedule now finishes (its next ticks are skipped and counted)';
  if (jobs.read_ceiling !== undefined)
    return { path: 'jobs.deadline', message: `is deprecated and ignored: jobs.read_ceiling is set; ${why}; remove it` };
  if (jobs.deadline === 'auto')
    return { path: 'jobs.deadline', message: `is deprecated: "auto" is ignored, ${why}; remove it` };
  return {
    path: 'jobs.deadline',
    message: `is deprecated: its duration is taken as jobs.read_ceiling, the hard bound of one read (default 15m), and ${why}; rename it read_ceiling`,
  };
}
