/**
 * Why an alert about a run is over, read in the runs snapshot that resolved it: shared by
 * failed_runs and stuck_runs, whose alerts are both about one run (their subject).
 */
import { groupKey } from '../collectors/settled-runs.js';
import type { RunsSnapshot } from '../collectors/snapshot.js';
import { isNewer, orderKey, sortNewestFirst } from '../lib/newest-first.js';
import type { ResolvedAlert } from './define-check.js';

/** The words for a run's state now: "succeeded" for a word of `succeeded`, else "is <state> now". */
function stateNow(run: { state: string; retrying?: boolean }, succeeded: readonly string[]): string {
  if (run.retrying) return 'is being retried by the service';
  return succeeded.includes(run.state) ? 'succeeded' : `is ${run.state} now`;
}

/**
 * "run #5981 succeeded" ("… after a retry" for a failure), "a newer update (run #6001) succeeded",
 * "a newer update (run #6001) failed too, …" (a failure the newer one's own alert carries on),
 * "run #5981 is gone from the service"; null when the alert names no run or the snapshot does not say.
 */
export function runResolution(
  alert: ResolvedAlert,
  snapshot: RunsSnapshot,
  states: {
    succeeded: readonly string[];
    stillOpen: readonly string[];
    /** The alert was about a failure of the run: settled now, it was retried ("succeeded after a retry"). */
    failure?: boolean;
  },
): string | null {
  const id = alert.subject?.type === 'run' ? alert.subject.id : undefined;
  if (id === undefined) return null;
  const run = snapshot.runs.find((r) => r.id === id);
  if (!run) return `run #${id} is gone from the service`;
  const place = orderKey(run);
  const key = groupKey(run);
  // The newer runs of its group, newest first: the newest of them still open, and the newest not.
  const newerRuns = sortNewestFirst(
    snapshot.runs.filter((r) => r.id !== id && groupKey(r) === key && isNewer(orderKey(r), place)),
  );
  const newer = newerRuns.find((r) => !states.stillOpen.includes(r.state));
  const newerOpen = newerRuns.find((r) => states.stillOpen.includes(r.state));
  if (newer) return `a newer ${newer.action} (run #${newer.id}) ${stateNow(newer, states.succeeded)}`;
  // Not over: the newest failure of the group decides, and is told in its own alert.
  if (newerOpen && states.failure)
    return `not over: a newer ${newerOpen.action} (run #${newerOpen.id}) failed too, and its own alert carries the failure on`;
  if (!states.stillOpen.includes(run.state) || run.retrying) {
    const now = stateNow(run, states.succeeded);
    // The same run, failed before and fine now: a retry restarted it (reference §4), whoever sent it.
    return `run #${id} ${now}${states.failure && now === 'succeeded' ? ' after a retry' : ''}`;
  }
  const settled = snapshot.settledNewest?.get(key);
  if (settled && isNewer(settled, place))
    return `a newer ${run.action} (run #${settled.id}) ${stateNow(settled, states.succeeded)}`;
  return null;
}
