/**
 * What the runs collector remembers from one cycle to the next, so a cycle reads what changed
 * rather than the whole look-back window. Owned by the runtime (one per running configuration) and
 * handed to the collector in its context; lost at a restart or reload, which costs one full walk.
 * Nothing here is state the alerts depend on: with it empty, the collector reads as it always did.
 */
import type { Run, RunListItem } from '../api/schemas.js';
import { SettledRunSummary } from './settled-runs.js';

/**
 * How far below the newest creation time already seen a later walk still reads: a run that shows
 * up in the list a little after it was created (the service's own lag, a clock apart) is still
 * read. The first page of a walk covers it at any usual rate of runs, so it costs no request.
 */
export const WALK_OVERLAP_MS = 60 * 60_000;

/** The cross-cycle memory of the runs collector. */
export class RunsMemory {
  /** The newest creation time the last walk read (ms), or undefined before the first walk. */
  newestCreated: number | undefined;
  /** Where the newest settled run of each group stands, over every walk so far. */
  readonly settled = new SettledRunSummary();
  /**
   * The last `runs.get` of each run in view, by id (here or by the context reader): reused while the
   * run's `updated_at` has not moved.
   */
  readonly details = new Map<number, Run>();
  /**
   * Runs announced from their list item (past the cycle's bound of reads by id), awaiting their
   * detail: the `updated_at` they were announced at. The alert's context reader reads them as a
   * rule; one still without a detail at that `updated_at` comes first among the collector's next
   * reads of new failures.
   */
  readonly awaiting = new Map<number, string | null>();
  /** The runs in a failed or active state last cycle: one that is in neither list now has settled. */
  wanted = new Map<number, RunListItem>();

  /** Where a walk may stop: the first run created before this (ms). */
  walkStop(lookbackStart: number): number {
    return this.newestCreated === undefined
      ? lookbackStart
      : Math.max(lookbackStart, this.newestCreated - WALK_OVERLAP_MS);
  }

  /**
   * Where the next walk stops: the newest creation time of a walk that was read to its end (a walk
   * cut short by a failed read leaves the memory as it was, or the runs it did not reach would be
   * passed over for good).
   */
  walked(newestCreated: number | undefined): void {
    if (newestCreated !== undefined) this.newestCreated = Math.max(newestCreated, this.newestCreated ?? -Infinity);
  }

  /**
   * Keeps the newest settled run only of the groups (`groupKey`) of the runs in view: a failure
   * comes into view only as a run in view (failed or still going, followed) or a new one, which no
   * older settled run can supersede. The rest (~19,000 groups, ~7 MB live at 10,000 apps) would
   * be held between cycles for nothing.
   */
  retainSettled(groups: ReadonlySet<string>): void {
    for (const key of this.settled.newest.keys()) if (!groups.has(key)) this.settled.newest.delete(key);
  }

  /** Forgets the settled runs created before `since`: none of them can supersede a failure in the window. */
  pruneSettled(since: number): void {
    for (const [key, run] of this.settled.newest) if (run.time < since) this.settled.newest.delete(key);
  }

  /**
   * A `runs.get` read elsewhere (the alert's context reader): kept, so the next cycle uses it
   * while the run's `updated_at` has not moved, and its finding says the step and reason.
   */
  remember(run: Run): void {
    this.details.set(run.id, run);
    this.awaiting.delete(run.id);
  }

  /** The remembered detail of `run`, when its `updated_at` has not moved since it was read. */
  currentDetail(run: RunListItem): Run | undefined {
    const detail = this.details.get(run.id);
    return detail && detail.updated_at === run.updated_at ? detail : undefined;
  }

  /** Keeps only what is about the runs in view now: `inView` ids. */
  retain(inView: ReadonlySet<number>): void {
    for (const id of this.details.keys()) if (!inView.has(id)) this.details.delete(id);
    for (const id of this.awaiting.keys()) if (!inView.has(id)) this.awaiting.delete(id);
  }
}
