/**
 * failed_runs: the newest settled run of each app (or record) and action, when it failed.
 *
 * "Newest" matters: a failed update followed by a successful one is over, so only the newest run
 * of an (app, action) can be a finding and a later success resolves the alert. A newer run that is
 * still going does NOT supersede an older failure: the failure stands until that run settles,
 * otherwise every retry would announce "resolved" and then, if it fails too, fire again.
 */
import { runStanding } from '../api/run-standing.js';
import type { Run, RunListItem } from '../api/schemas.js';
import type { AppLabels } from '../collectors/views.js';
import type { RunsSnapshot } from '../collectors/snapshot.js';
import { buildLabels } from './build-labels.js';
import { environmentSeverity, PRODUCTION_CRITICAL, type EnvironmentSeverity } from './environment-severity.js';
import type { Finding } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { oneLine } from './one-line.js';
import { formatDuration } from '../lib/format-duration.js';
import { isNewer, orderKey, sortNewestFirst, type OrderKey } from '../lib/newest-first.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { runContext } from './run-context.js';

/** Options of the failed_runs check (`checks.failed_runs`). */
export interface FailedRunsOptions {
  /** Run states meaning the run failed, unless `retrying` is true (default: the simulator's `error`). */
  failedStates: readonly string[];
  /** Run states meaning the run is still going (default: `queued`, `running`). */
  activeStates: readonly string[];
  /** How long a run may stay `retrying` (from its `updated_at`) before it counts as failed. */
  retryingGraceMs: number;
  /** Severity per environment type; default critical in production, warning elsewhere. */
  severity?: Partial<EnvironmentSeverity>;
}

/**
 * How one run stands, with a named reason: `failed` can be a finding, `pending` is still going
 * (and does not supersede an older failure), `settled` is over and fine.
 */
export type RunVerdict =
  | { kind: 'failed'; reason: 'failed_state' | 'retrying_past_grace' | 'watcher_failed' }
  | { kind: 'pending'; reason: 'active_state' | 'retrying_within_grace' | 'watcher_waiting' }
  | { kind: 'settled'; reason: 'not_failed' };

/** Judges one run from its list item and, where the snapshot has it, its `runs.get` detail. */
export function judgeRun(
  run: RunListItem,
  detail: Run | undefined,
  options: FailedRunsOptions,
  now: number,
): RunVerdict {
  const standing = runStanding(run, detail?.watcher, { failed: options.failedStates, active: options.activeStates });
  switch (standing.kind) {
    case 'failed':
      return { kind: 'failed', reason: standing.why };
    case 'active':
      return { kind: 'pending', reason: standing.why };
    case 'retrying': {
      // §3.1: retrying is "not failed yet" — until it has been retrying for longer than the grace.
      const since = parseTime(run.updated_at) ?? parseTime(run.created_at);
      if (since !== null && now - since >= options.retryingGraceMs) {
        return { kind: 'failed', reason: 'retrying_past_grace' };
      }
      return { kind: 'pending', reason: 'retrying_within_grace' };
    }
    case 'succeeded':
    case 'other':
      return { kind: 'settled', reason: 'not_failed' };
  }
}

/** Runs that supersede each other: the same app (or record, for runs on no app) and action. */
export function groupKey(run: RunListItem): string {
  if (run.app_id !== null) return `app:${run.app_id}:${run.action}`;
  if (run.record !== null) return `record:${run.record_type ?? ''}:${run.record}:${run.action}`;
  return `run:${run.id}`;
}

/**
 * The settled runs a collector leaves out of a runs snapshot, summarised the way failed_runs reads
 * them. A run in neither a failed nor an active state has no detail (so no watcher) and is judged
 * `settled`: all it can ever decide is that the older runs of its group are over. So per group only
 * where the newest such run stands is kept ({@link RunsSnapshot.settledNewest}), not the runs.
 */
export class SettledRunSummary {
  readonly newest = new Map<string, OrderKey>();

  /** Counts `run` (a settled one) in; reading the same run twice (a walk read again) changes nothing. */
  add(run: RunListItem): void {
    const key = groupKey(run);
    const place = orderKey(run);
    const known = this.newest.get(key);
    if (!known || isNewer(place, known)) this.newest.set(key, place);
  }
}

/** Finds the newest settled run of each (app or record, action) that failed. */
export function failedRuns(snapshot: RunsSnapshot, options: FailedRunsOptions, now: number): Finding[] {
  const groups = new Map<string, RunListItem[]>();
  for (const run of snapshot.runs) {
    const key = groupKey(run);
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  const findings: Finding[] = [];
  for (const [key, group] of groups) {
    sortNewestFirst(group);
    // A settled run left out of the snapshot that is newer than the deciding run would have decided.
    const settled = snapshot.settledNewest?.get(key);
    for (const run of group) {
      const detail = snapshot.details.get(run.id);
      const verdict = judgeRun(run, detail, options, now);
      if (verdict.kind === 'pending') continue;
      if (verdict.kind === 'failed' && !(settled && isNewer(settled, orderKey(run)))) {
        findings.push(toFinding(run, detail, verdict.reason, snapshot.apps, options, now));
      }
      break;
    }
  }
  return findings;
}

function toFinding(
  run: RunListItem,
  detail: Run | undefined,
  reason: 'failed_state' | 'retrying_past_grace' | 'watcher_failed',
  apps: ReadonlyMap<number, AppLabels>,
  options: FailedRunsOptions,
  now: number,
): Finding {
  const ctx = runContext(run, apps);
  // The failed step: the reference gives `reason` only as "why a step failed", so the last step
  // carrying one is the failed step — found without assuming any step state word.
  const step = detail ? [...detail.steps].reverse().find((s) => s.reason !== null) : undefined;
  const watcher = detail?.watcher ?? null;
  const why =
    reason === 'watcher_failed' ? (watcher?.reason ?? `watcher ${watcher?.state ?? 'failed'}`) : (step?.reason ?? null);

  let summary = `${ctx.title} of ${ctx.name}${ctx.environmentSuffix} failed`;
  if (reason === 'watcher_failed') summary += ` on the server (watcher ${watcher?.state ?? 'failed'})`;
  else if (step) summary += ` at step ${step.name}`;
  if (why) summary += `: ${why}`;
  const updated = parseTime(run.updated_at) ?? parseTime(run.created_at);
  if (reason === 'retrying_past_grace' && updated !== null) {
    summary += ` (still retrying after ${formatDuration(now - updated)})`;
  }

  const since = toIso(run.updated_at) ?? toIso(run.created_at);
  const details: Record<string, string> = {
    run: `#${run.id}`,
    workflow: run.workflow,
    action: run.action,
    state: run.state,
  };
  if (step) details.step = step.name;
  if (why) details.reason = why;
  if (watcher) details.watcher = watcher.state;
  if (run.retrying) details.retrying = 'yes';
  if (since) details.since = since;

  const table = { ...PRODUCTION_CRITICAL, ...options.severity };
  return {
    fingerprint: fingerprint('failed_runs', 'run', run.id),
    check: 'failed_runs',
    severity: environmentSeverity(ctx.environmentType, table),
    summary: oneLine(summary),
    details,
    labels: buildLabels('failed_runs', { ...ctx.labels, step: step?.name }),
    url: ctx.url,
    since,
    subject: { type: 'run', id: run.id },
  };
}
