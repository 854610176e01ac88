/**
 * The runs job's read so far, offered to `ctx.soFar` (`read-so-far.ts`), so a read cut by a hard
 * bound still announces the failures it saw: the runs listed and kept until the cut, newest first,
 * the settled runs summarised until then (a newer settled run still supersedes an older failure:
 * the list is newest first, so a failure read was read after anything newer of its group), and the
 * details read by then. No apps: labels come from the runs themselves (a run carries its project
 * and environment type), and the complete read that follows adds the app's name and links.
 */
import type { Run, RunListItem } from '../api/schemas.js';
import { sortNewestFirst } from '../lib/newest-first.js';
import type { CollectorContext } from './collector-context.js';
import type { SettledRunSummary } from './settled-runs.js';
import type { RunsSnapshot } from './snapshot.js';
import type { StateWordTally } from './state-word-tally.js';

/**
 * Offers the runs read so far; answers the map the collector adds each run it keeps from a list to.
 * `details` is the collector's own map, filled as each `runs.get` comes back.
 */
export function runsSoFar(
  ctx: Pick<CollectorContext, 'soFar' | 'now'>,
  parts: {
    stateWords: StateWordTally;
    settled: SettledRunSummary | undefined;
    details: ReadonlyMap<number, Run>;
    /** What each open failed_runs alert last said of its run: a cut read follows lineage too. */
    openFailures: RunsSnapshot['openFailures'];
  },
): Map<number, RunListItem> {
  const listed = new Map<number, RunListItem>();
  ctx.soFar?.offer(() => {
    if (listed.size === 0 && parts.details.size === 0) return undefined;
    const runs = new Map<number, RunListItem>(listed);
    for (const [id, run] of parts.details) if (!runs.has(id)) runs.set(id, run);
    return {
      job: 'runs',
      takenAt: ctx.now,
      stateWords: parts.stateWords,
      runs: sortNewestFirst([...runs.values()]),
      ...(parts.settled && { settledNewest: new Map(parts.settled.newest) }),
      details: new Map(parts.details),
      apps: new Map(),
      ...(parts.openFailures && { openFailures: parts.openFailures }),
    };
  });
  return listed;
}
