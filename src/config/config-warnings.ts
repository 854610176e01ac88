import type { ConfigProblem } from './config-error.js';
import type { Config } from './load-config.js';
import { stateListsFromConfig } from '../detectors/registry.js';

/**
 * What a valid configuration says that its author most likely did not mean: said by `validate`,
 * and logged when the daemon starts or reloads, never refused (each can be meant, for a while).
 * - No channel: alerts are recorded and listed by `alerts`, and nobody is told of any.
 * - `jobs.deadline`, deprecated: a read no longer ends at its schedule; its duration is the ceiling.
 * - A state word in two lists of one kind of record: it means two things, and one silently wins.
 * - A job scheduled more than once a minute: a sixth field added by mistake (6 start with seconds).
 */
export function configWarnings(config: Config): ConfigProblem[] {
  const noChannel = config.notify.channels.length === 0 && {
    path: 'notify.channels',
    message:
      "no channel is configured: alerts are recorded (see `deploy-watchdog alerts`) and nobody is told; add one (type: log writes them to the daemon's log)",
  };
  return [
    noChannel,
    jobsDeadlineWarning(config.jobs),
    ...stateWordsInTwoLists(config.checks),
    ...everySecondsWarnings(config.jobs),
  ].filter((w) => !!w);
}

/**
 * Each job whose schedule has 6 fields and a `*` in the first, its seconds: `*\/5 * * * * *` runs
 * every 5 seconds, most often `*\/5 * * * *` with one `*` too many. Meant, it is allowed.
 */
function everySecondsWarnings(jobs: Config['jobs']): ConfigProblem[] {
  return Object.entries(jobs).flatMap(([job, schedule]) => {
    // Schedules are the strings with fields; jitter and the ceilings are numbers (ms).
    const fields = typeof schedule === 'string' ? schedule.split(' ') : [];
    if (fields.length !== 6 || !fields[0]!.includes('*')) return [];
    const message = `runs more than once a minute: a schedule of 6 fields starts with seconds ("${fields[0]}" here); for minutes write 5 fields, or start the 6 with 0`;
    return [{ path: `jobs.${job}`, message }];
  });
}

/**
 * A state word listed in two `checks.*` lists of one kind of record, said at the later list: a run
 * state in `failed_runs.failed_states` and `stuck_runs.active_states` alerts as failed and as stuck.
 * A warning, not a refusal: a config that gives `bad_states: [stopped]` and keeps the default
 * `stopped_states` means "at once", and has always been read so.
 */
function stateWordsInTwoLists(checks: Config['checks']): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  for (const lists of stateListsFromConfig(checks).values()) {
    for (const [i, list] of lists.entries()) {
      for (const other of lists.slice(i + 1)) {
        const both = other.words.filter((word) => list.words.includes(word));
        if (both.length === 0) continue;
        const words = `"${both.join('", "')}"`;
        warnings.push({
          path: other.key,
          message: `${words} is also in ${list.key}, which means something else: keep each state word in one list`,
        });
      }
    }
  }
  return warnings;
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
