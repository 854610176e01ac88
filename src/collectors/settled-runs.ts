/**
 * The settled runs a runs collector leaves out of its snapshot, summarised the way the failed_runs
 * check reads them. Here, on the collectors' side, because data flows from collectors to detectors:
 * the detector imports {@link groupKey}, the collector never imports a detector.
 */
import type { RunListItem } from '../api/schemas.js';
import { isNewer, orderKey, type OrderKey } from '../lib/newest-first.js';

/** Runs that supersede each other: the same app (or record, for runs on no app) and action. */
export function groupKey(run: RunListItem): string {
  if (run.app_id !== null) return `app:${run.app_id}:${run.action}`;
  if (run.record !== null) return `record:${run.record_type ?? ''}:${run.record}:${run.action}`;
  return `run:${run.id}`;
}

/**
 * A run in neither a failed nor an active state has no detail (so no watcher) and is judged
 * `settled`: all it can ever decide is that the older runs of its group are over. So per group only
 * where the newest such run stands is kept (`RunsSnapshot.settledNewest`), not the runs.
 */
export class SettledRunSummary {
  readonly newest: Map<string, SettledRun>;

  /** A summary starting from `from`'s (a copy). */
  constructor(from: ReadonlyMap<string, SettledRun> = new Map()) {
    this.newest = new Map(from);
  }

  /** Counts `run` (a settled one) in; reading the same run twice (a walk read again) changes nothing. */
  add(run: RunListItem): void {
    this.keep(groupKey(run), { ...orderKey(run), state: run.state });
  }

  /** Keeps `run` as the newest settled run of the group `key` when it is newer than the one kept. */
  keep(key: string, run: SettledRun): void {
    const known = this.newest.get(key);
    if (!known || isNewer(run, known)) this.newest.set(key, run);
  }
}

/** Where the newest settled run of a group stands (its id among them), and its state: what a resolution says of it. */
export type SettledRun = OrderKey & { state: string };
