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
import { groupKey } from '../collectors/settled-runs.js';
import type { RunsSnapshot } from '../collectors/snapshot.js';
import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { FAILED_RUN_STATES, OTHER_RUN_STATES, SUCCEEDED_RUN_STATES } from '../config/state-words.js';
import { buildLabels } from './build-labels.js';
import { defineCheck } from './define-check.js';
import { environmentSeverity, PRODUCTION_CRITICAL, type EnvironmentSeverity } from './environment-severity.js';
import type { Detection } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { formatDuration } from '../lib/format-duration.js';
import { isNewer, orderKey, sortNewestFirst } from '../lib/newest-first.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { runContext, runContextAsk } from './run-context.js';
import { runResolution } from './run-resolution.js';
import type { StuckRunsConfig } from './stuck-runs.js';

/** Options of the failed_runs check (`checks.failed_runs`). */
export interface FailedRunsOptions {
  /** Run states meaning the run failed, unless `retrying` is true (default: the simulator's `error`). */
  failedStates: readonly string[];
  /** Run states meaning the run is still going (default: `queued`, `running`). */
  activeStates: readonly string[];
  /** How long a run may stay `retrying` (from its `updated_at`) before it counts as failed. */
  retryingGraceMs: number;
  /** Run states meaning finished well: what a resolution says ("succeeded"). Default: none named. */
  succeededStates?: readonly string[];
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

/** `checks.failed_runs`. */
const failedRunsConfig = checkConfig({
  failed_states: stateListSchema(FAILED_RUN_STATES).describe('Run states that mean failed.'),
  succeeded_states: stateListSchema(SUCCEEDED_RUN_STATES).describe(
    'Run states that mean finished well: how remediation tells that a run it started (a retry, a backup) succeeded.',
  ),
  other_states: otherStatesSchema(OTHER_RUN_STATES, 'Run'),
  retrying_grace: durationSchema
    .prefault('30m')
    .describe('A failed run with an automatic retry due is not alerted until this long after it failed.'),
  lookback: durationSchema
    .prefault('7d')
    .describe(
      'How far back runs.list is read for new failures (by creation time). A failed run already alerted is read again by id however old: it resolves only when it (or a newer run of the same app and action) settles, never by ageing out.',
    ),
});

/** The failed_runs check: a run's active states are stuck_runs' (`checks.stuck_runs.active_states`). */
export const failedRunsCheck = defineCheck({
  name: 'failed_runs',
  job: 'runs',
  config: failedRunsConfig,
  options: (own, checks: { stuck_runs: StuckRunsConfig }): FailedRunsOptions | undefined =>
    own.enabled
      ? {
          failedStates: own.failed_states,
          activeStates: checks.stuck_runs.active_states,
          retryingGraceMs: own.retrying_grace,
          succeededStates: own.succeeded_states,
        }
      : undefined,
  detect: failedRuns,
  resolution: (alert, snapshot, options) =>
    runResolution(alert, snapshot, { succeeded: options.succeededStates ?? [], stillOpen: options.failedStates }),
  // The log around the failure and, for an update or upgrade, its restore point.
  context: runContextAsk,
  stateLists: { record: 'run', fields: ['failed_states', 'succeeded_states', 'other_states'] },
  presentation: {
    noun: ['failed run', 'failed runs'],
    facts: factsFrom([
      ['run', 'Run'],
      ['step', 'Step'],
      ['reason', 'Reason'],
      ['watcher', 'Watcher'],
      ['retrying', 'Retrying'],
    ]),
    brief: (d) => {
      if (d.step && d.reason) return `step ${d.step}: ${d.reason}`;
      return d.reason ?? (d.step ? `step ${d.step}` : null);
    },
    nextStep: ({ details }) =>
      details.watcher
        ? 'Find on the server why its watcher failed, fix that, then retry the run.'
        : "Read the failed step's log, fix the cause, then retry the run.",
  },
});

/** Finds the newest settled run of each (app or record, action) that failed. */
export function failedRuns(
  snapshot: RunsSnapshot,
  options: FailedRunsOptions,
  now: number,
): Detection<'failed_runs'>[] {
  const groups = new Map<string, RunListItem[]>();
  for (const run of snapshot.runs) {
    const key = groupKey(run);
    const group = groups.get(key);
    if (group) group.push(run);
    else groups.set(key, [run]);
  }
  const findings: Detection<'failed_runs'>[] = [];
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
): Detection<'failed_runs'> {
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
  // Not shown: what the alert's context is read by (the app's log and restore points).
  if (run.app_id !== null) details.app_id = String(run.app_id);
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
