/**
 * failed_runs: the newest settled run of each app (or record) and action, when it failed.
 *
 * "Newest" matters: a failed update followed by a successful one is over, so only the newest run
 * of an (app, action) can be a finding and a later success resolves the alert. A newer run that is
 * still going does NOT supersede an older failure already alerted: it stands until that run
 * settles. A failure nobody was told of behind a newer run going is not announced: the newer run
 * decides.
 *
 * Lineage (`run-lineage.ts`): a retry restarts the failed run under the same id (reference §4),
 * whoever retried it. Its alert follows it: while the run runs again the alert stays open and says
 * so, a failure of the retry escalates that same alert, and only the run's own success (or a
 * newer settled run of the group) resolves it.
 */
import type { z } from 'zod';
import { runVerdict, WATCHER_FAILURES } from '../api/run-verdict.js';
import type { Run, RunListItem } from '../api/schemas.js';
import type { AppLabels } from '../collectors/views.js';
import { groupKey } from '../collectors/settled-runs.js';
import type { RunsSnapshot } from '../collectors/snapshot.js';
import { checkConfig, otherStatesSchema, stateListSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { FAILED_RUN_STATES, OTHER_RUN_STATES, SUCCEEDED_RUN_STATES } from '../config/state-words.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import { productionCritical } from './environment-severity.js';
import { RESOLVED_SUMMARY, UNDERWAY_SINCE, type Detection } from './finding.js';
import { oneLine } from './one-line.js';
import { factsFrom } from './presentation.js';
import { formatDuration } from '../lib/format-duration.js';
import { getOrAdd } from '../lib/get-or-add.js';
import { isNewer, orderKey, sortNewestFirst } from '../lib/newest-first.js';
import { formatUtc } from '../lib/format-utc.js';
import { parseTime } from '../lib/parse-time.js';
import { runContext, runContextAsk, runDetails } from './run-context.js';
import {
  currentStep,
  failedStep,
  failureTime,
  retryingSince,
  retrySince,
  toldFailedAt,
  type Told,
} from './run-lineage.js';
import { runResolution } from './run-resolution.js';
import type { StuckRunsConfig } from './stuck-runs.js';

/**
 * How one run stands, with a named reason: `failed` can be a finding, `pending` is still going
 * (and does not supersede an older failure), `settled` is over and fine.
 */
export type RunVerdict =
  | { kind: 'failed'; reason: 'failed_state' | 'retrying_past_grace' | 'watcher_failed' }
  | { kind: 'pending'; reason: 'active_state' | 'retrying_within_grace' | 'watcher_waiting' | 'unknown_state' }
  | { kind: 'settled'; reason: 'not_failed' };

/**
 * Judges one run from its list item and, where the snapshot has it, its `runs.get` detail and what
 * its open alert told of it (`told`: when it was first seen retrying).
 */
export function judgeRun(
  run: RunListItem,
  detail: Run | undefined,
  options: FailedRunsOptions,
  now: number,
  told?: Told,
): RunVerdict {
  const verdict = runVerdict(run, detail?.watcher, { failed: options.failed_states, active: options.active_states });
  switch (verdict.kind) {
    case 'failed':
      return { kind: 'failed', reason: verdict.why };
    case 'active':
      return { kind: 'pending', reason: verdict.why };
    case 'retrying': {
      // §3.1: retrying is "not failed yet" — until it has been retrying for longer than the grace,
      // counted from when it first failed, not from `updated_at`, which each automatic retry moves.
      const since = retryingSince(run, detail, told);
      if (since !== null && now - since >= options.retrying_grace) {
        return { kind: 'failed', reason: 'retrying_past_grace' };
      }
      return { kind: 'pending', reason: 'retrying_within_grace' };
    }
    case 'succeeded':
      return { kind: 'settled', reason: 'not_failed' };
    case 'other':
      // A word no state list names (the service's retry may say "pending"): not known to be over.
      return options.succeeded_states.includes(run.state) || options.other_states.includes(run.state)
        ? { kind: 'settled', reason: 'not_failed' }
        : { kind: 'pending', reason: 'unknown_state' };
  }
}

/** `checks.failed_runs`. */
export const failedRunsConfig = checkConfig({
  failed_states: stateListSchema(FAILED_RUN_STATES).describe('Run states that mean failed.'),
  succeeded_states: stateListSchema(SUCCEEDED_RUN_STATES).describe(
    'Run states that mean finished well: how remediation tells that a run it started (a retry, a backup) succeeded.',
  ),
  other_states: otherStatesSchema(OTHER_RUN_STATES, 'Run'),
  retrying_grace: durationSchema
    .prefault('30m')
    .describe(
      'A failed run with an automatic retry due is not alerted until this long after it first failed (its failed step, or the first cycle that saw it retrying; not updated_at, which each retry moves).',
    ),
  lookback: durationSchema
    .prefault('7d')
    .describe(
      'How far back runs.list is read for new failures (by creation time). A failed run already alerted is read again by id however old: it resolves only when it (or a newer run of the same app and action) settles, never by ageing out.',
    ),
});

/**
 * `checks.failed_runs` as parsed, with stuck_runs' `active_states` (a run still going): the detector's
 * options. Severity: critical in production, warning elsewhere.
 */
export type FailedRunsOptions = z.output<typeof failedRunsConfig> & Pick<StuckRunsConfig, 'active_states'>;

/** The failed_runs check: a run's active states are stuck_runs' (`checks.stuck_runs.active_states`). */
export const failedRunsCheck = defineCheck({
  name: 'failed_runs',
  job: 'runs',
  config: failedRunsConfig,
  options: (own, checks: { stuck_runs: StuckRunsConfig }): FailedRunsOptions | undefined =>
    own.enabled ? { ...own, active_states: checks.stuck_runs.active_states } : undefined,
  detect: failedRuns,
  resolution: (alert, snapshot, options) =>
    runResolution(alert, snapshot, {
      succeeded: options.succeeded_states,
      stillOpen: options.failed_states,
      failure: true,
    }),
  // The log around the failure and, for an update or upgrade, its restore point.
  context: runContextAsk,
  stateLists: { record: 'run', fields: ['failed_states', 'succeeded_states', 'other_states'] },
  presentation: {
    noun: ['failed run', 'failed runs'],
    facts: factsFrom([
      'run',
      'step',
      'reason',
      'watcher',
      'retrying',
      ['retrying_since', 'Retrying by itself since', 'time'],
      ['retry_since', 'Retry running since', 'time'],
      ['retry_step', 'Retry at step'],
      ['retries', 'Failed retries'],
    ]),
    brief: (d) => {
      const failure =
        d.step && d.reason ? `step ${d.step}: ${d.reason}` : (d.reason ?? (d.step ? `step ${d.step}` : null));
      const retry = parseTime(d.retry_since);
      if (retry === null) return failure;
      return `retrying since ${formatUtc(retry)}${d.retry_step ? `, step ${d.retry_step}` : ''}${failure ? ` · ${failure}` : ''}`;
    },
    nextStep: ({ details }) => {
      if (details.retry_since) return 'A retry is running: wait for its outcome, which this alert will tell.';
      return details.watcher
        ? 'Find on the server why its watcher failed, fix that, then retry the run.'
        : "Read the failed step's log, fix the cause, then retry the run.";
    },
  },
});

/**
 * Finds, per (app or record, action), the newest run that failed, and follows a run already
 * alerted through its retries: running again, it stays a finding that says so (`underway`); failed
 * again, the same finding escalates its alert (`escalation`); only its own success (or a newer
 * settled run of the group) ends it.
 */
export function failedRuns(
  snapshot: RunsSnapshot,
  options: FailedRunsOptions,
  now: number,
): Detection<'failed_runs'>[] {
  const groups = new Map<string, RunListItem[]>();
  for (const run of snapshot.runs) getOrAdd(groups, groupKey(run), () => []).push(run);
  const findings: Detection<'failed_runs'>[] = [];
  for (const [key, group] of groups) {
    sortNewestFirst(group);
    // A settled run left out of the snapshot that is newer than the deciding run would have decided.
    const settled = snapshot.settledNewest?.get(key);
    // Once a newer run of the group is going, an older failure nobody was told of is superseded:
    // the newer run decides when it settles. One already told (its alert open) stands until then.
    let overtaken = false;
    for (const run of group) {
      if (settled && isNewer(settled, orderKey(run))) break;
      const detail = snapshot.details.get(run.id);
      const told = snapshot.openFailures?.get(run.id);
      const verdict = judgeRun(run, detail, options, now, told);
      if (verdict.kind === 'settled') break;
      // Not announced, and not a reason to resolve an older failure that was: that one stands
      // until the newer run going settles.
      if (overtaken && !told) continue;
      const sighting = sightingOf(verdict, told);
      if (sighting) findings.push(toFinding(run, detail, told, sighting, snapshot.apps, options, now));
      // A failure, or a told one going on, decides the group; a held retry or a newer run going does not.
      if (sighting && sighting.kind !== 'retrying') break;
      overtaken = true;
    }
  }
  return findings;
}

/**
 * What a finding says of its run: it failed (for good, or still retrying past the grace), it failed
 * and the service will retry it by itself (within the grace: held, not yet announced), or a failure
 * already told is being retried (the run is going again).
 */
type Sighting =
  | Extract<RunVerdict, { kind: 'failed' }>
  | { kind: 'retrying' }
  | { kind: 'underway' }
  /** A failure already told whose run is now in a state word no list names: held as told. */
  | { kind: 'unknown' };

/**
 * What a run not settled is a finding of: its failure; a retry by the service within the grace; a
 * failure told before whose run goes on (in a state no list names: `unknown`); null for a run going
 * that no alert told of.
 */
function sightingOf(verdict: Exclude<RunVerdict, { kind: 'settled' }>, told: Told | undefined): Sighting | null {
  if (verdict.kind === 'failed') return verdict;
  if (verdict.reason === 'retrying_within_grace') return { kind: 'retrying' };
  if (!told) return null;
  return verdict.reason === 'unknown_state' ? { kind: 'unknown' } : { kind: 'underway' };
}

/** Where and why a run failed. */
interface Failure {
  step: string | null;
  why: string | null;
  /** The watcher's state when it was the watcher that failed. */
  watcher: string | null;
}

/** The failure as read now, from the run's detail; what the alert told when the detail does not say. */
function failureRead(detail: Run | undefined, watcherFailed: boolean, told: Told | undefined): Failure {
  const watcher = detail?.watcher ?? null;
  if (watcherFailed) {
    return {
      step: null,
      why: watcher?.reason ?? `watcher ${watcher?.state ?? 'failed'}`,
      watcher: watcher?.state ?? 'failed',
    };
  }
  const step = failedStep(detail);
  if (!step && told) return failureTold(told);
  return { step: step?.name ?? null, why: step?.reason ?? null, watcher: null };
}

/** The failure as the alert told it: a run going again no longer shows where it failed. */
function failureTold(told: Told): Failure {
  const watcher = told.watcher !== undefined && WATCHER_FAILURES.has(told.watcher) ? told.watcher : null;
  return { step: watcher ? null : (told.step ?? null), why: told.reason ?? null, watcher };
}

function toFinding(
  run: RunListItem,
  detail: Run | undefined,
  told: Told | undefined,
  sighting: Sighting,
  apps: ReadonlyMap<number, AppLabels>,
  options: FailedRunsOptions,
  now: number,
): Detection<'failed_runs'> {
  const ctx = runContext(run, apps);
  const underway = (sighting.kind === 'underway' || sighting.kind === 'unknown') && told !== undefined;
  const failure = underway
    ? failureTold(told)
    : failureRead(detail, sighting.kind === 'failed' && sighting.reason === 'watcher_failed', told);
  const failedAt = underway ? toldFailedAt(told) : failureTime(run);
  // A failure of the run after the one its alert told (a retry that failed for good): news.
  const toldAt = told ? toldFailedAt(told) : null;
  const escalation =
    sighting.kind === 'failed' &&
    sighting.reason !== 'retrying_past_grace' &&
    told !== undefined &&
    (told.retry_since !== undefined || (toldAt !== null && failedAt !== null && failedAt > toldAt));
  const retries = Number(told?.retries ?? 0) + (escalation ? 1 : 0);

  let summary = `${ctx.title} of ${ctx.name}${ctx.environmentSuffix} failed`;
  if (retries > 0) summary += retries === 1 ? ' again after a retry' : ` again after ${retries} retries`;
  if (failure.watcher) summary += ` on the server (watcher ${failure.watcher})`;
  else if (failure.step) summary += ` at step ${failure.step}`;
  if (failure.why) summary += `: ${failure.why}`;

  const since = told?.since ?? (failedAt === null ? null : new Date(failedAt).toISOString());
  const details = runDetails(run);
  // Not shown: what the alert's context is read by (the app's log and restore points).
  if (run.app_id !== null) details.app_id = String(run.app_id);
  if (failure.step) details.step = failure.step;
  if (failure.why) details.reason = failure.why;
  const watcher = underway ? (told.watcher ?? null) : (detail?.watcher?.state ?? null);
  if (watcher) details.watcher = watcher;
  if (run.retrying) details.retrying = 'yes';

  if (underway) details[RESOLVED_SUMMARY] = oneLine(summary);
  if (sighting.kind === 'unknown') {
    summary += `; now in state ${JSON.stringify(run.state)}, which no state list names: held, not resolved`;
  } else if (sighting.kind === 'underway') {
    // Kept while it runs again: an automatic retry that fails again is retrying since then still.
    if (told?.retrying_since) details.retrying_since = told.retrying_since;
    const retryAt = told ? retrySince(run, detail, told) : null;
    const at = currentStep(detail)?.name;
    if (retryAt !== null) {
      details[UNDERWAY_SINCE] = new Date(retryAt).toISOString();
      summary += `; retrying since ${formatUtc(retryAt)}`;
    } else summary += '; retrying';
    if (at) {
      details.retry_step = at;
      summary += `, step ${at}`;
    }
  } else if (run.retrying) {
    const anchor = retryingSince(run, detail, told);
    if (anchor !== null) details.retrying_since = new Date(anchor).toISOString();
    if (sighting.kind === 'failed' && anchor !== null) {
      summary += ` (still retrying after ${formatDuration(now - anchor)})`;
    } else summary += ' (the service retries it by itself)';
  }
  if (retries > 0) details.retries = String(retries);
  const failedIso = failedAt === null ? null : new Date(failedAt).toISOString();
  if (failedIso !== null && failedIso !== since) details.failed_at = failedIso;
  if (since) details.since = since;

  const labels = { ...ctx.labels, step: failure.step ?? undefined };
  return {
    ...recordFinding('failed_runs', { type: 'run', id: run.id }, labels, ctx.url),
    severity: productionCritical(ctx.environmentType),
    summary: oneLine(summary),
    details,
    since,
    // Within the grace the service may yet succeed: held from the first sighting (each automatic
    // retry moves the run's own times), announced only once the grace is over.
    ...(sighting.kind === 'retrying' && {
      holdForMs: options.retrying_grace,
      holdReason: `the service retries run #${run.id} by itself (checks.failed_runs.retrying_grace: ${formatDuration(options.retrying_grace, 'exact')}); told then unless it succeeds`,
    }),
    ...(sighting.kind === 'underway' && {
      underway: true,
      holdReason: `run #${run.id} is running again (a retry${details[UNDERWAY_SINCE] ? ` since ${formatUtc(Date.parse(details[UNDERWAY_SINCE]))}` : ''}${details.retry_step ? `, step ${details.retry_step}` : ''}): told only if the retry fails`,
    }),
    ...(escalation && { escalation: 'retry failed' as const }),
  };
}
