/**
 * The one sink of a cycle's results: the alert lifecycle, then every stage that takes its events
 * (the outbox, remediation), in one transaction. Like Alertmanager's pipeline, each stage has one
 * signature, so a new stage is one more entry in the list the composition root builds, and no
 * caller spells out "lifecycle, outbox, remediation" by hand: either all of a cycle's results are
 * written, or none.
 */
import type { AlertEvent } from './alert-event.js';
import type { AlertRow, AlertStore } from './alert-store.js';
import { applyFindings, type ApplyOptions, type LifecycleInput } from './lifecycle.js';
import type { JobKey } from './job-key.js';

/** What one cycle committed, as every stage receives it. */
export interface CommittedCycle {
  /** The job whose cycle it was (its own key, or its source key when only source alerts changed). */
  job: JobKey;
  /** Every event the lifecycle wrote, in order, with its row id. */
  events: readonly AlertEvent[];
  /** Firing alerts whose record began being worked on again (`LifecycleInput.onUnderway`); no event. */
  underway: readonly AlertRow[];
  now: number;
}

/**
 * A stage of the pipeline after the lifecycle: called inside the cycle's transaction with what it
 * committed, so its own writes (outbox rows, planned remediation) commit with the alert state or
 * not at all. Synchronous; a throw rolls the whole cycle back. Work that waits (sending, following
 * a run) belongs in the stage's own loop, woken here.
 */
export interface CycleStage {
  take(cycle: CommittedCycle): void;
}

/** One snapshot of findings for the lifecycle: a job key and what was found (see `LifecycleInput`), with its rules. */
export interface FindingsPart extends Omit<LifecycleInput, 'now' | 'onUnderway'> {
  options: ApplyOptions;
}

/**
 * Writes one cycle in one transaction (a savepoint when a transaction is already open): `write`
 * runs first, inside it, for the cycle's own bookkeeping (source health) and answers the snapshots
 * to apply; then the lifecycle applies each, and every stage takes the events. A cycle that applies
 * no snapshot (a failed read below the alert threshold) gives the stages nothing to take. Returns
 * the events.
 */
export function commitFindings(
  alerts: AlertStore,
  cycle: { job: JobKey; now: number; write: () => readonly FindingsPart[] },
  stages: readonly CycleStage[],
): AlertEvent[] {
  return alerts.store.transaction(() => {
    const parts = cycle.write();
    if (parts.length === 0) return [];
    const underway: AlertRow[] = [];
    const events = parts.flatMap(({ options, ...part }) =>
      applyFindings(alerts, { ...part, onUnderway: (alert) => underway.push(alert), now: cycle.now }, options),
    );
    const committed: CommittedCycle = { job: cycle.job, events, underway, now: cycle.now };
    for (const stage of stages) stage.take(committed);
    return events;
  });
}
