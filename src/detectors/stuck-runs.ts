/**
 * stuck_runs: a run still going (an active state, or its watcher still waiting on the server)
 * for longer than `max_duration`.
 *
 * The run's age is measured from its `created_at` — a run stuck in the queue is as stuck as one
 * stuck in a step, and the whole run is what the operator waits on — or, for a run retried after a
 * failure its failed_runs alert told of (the same run restarted), from when the retry began. Without `created_at`, the first
 * step's `started_at` stands in. A run with neither cannot be judged and is skipped (never guessed).
 * The running step and how long it has been running, and the watcher's progress, go in the details.
 */
import { z } from 'zod';
import { runVerdict } from '../api/run-verdict.js';
import type { Run, RunListItem } from '../api/schemas.js';
import type { RunsSnapshot } from '../collectors/snapshot.js';
import { checkConfig, stateListSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import { ACTIVE_RUN_STATES } from '../config/state-words.js';
import { defineCheck } from './define-check.js';
import { recordFinding } from './record-finding.js';
import type { Detection } from './finding.js';
import { formatDuration } from '../lib/format-duration.js';
import { oneLine } from './one-line.js';
import { runResolution } from './run-resolution.js';
import { factsFrom } from './presentation.js';
import { parseTime, toIso } from '../lib/parse-time.js';
import { runContext, runDetails } from './run-context.js';
import { currentStep, retrySince, type Told } from './run-lineage.js';

/** `checks.stuck_runs`. */
export const stuckRunsConfig = checkConfig({
  active_states: stateListSchema(ACTIVE_RUN_STATES).describe('Run states that mean still going.'),
  max_duration: durationSchema.prefault('2h').describe('A run active longer than this is stuck.'),
});

/** `checks.stuck_runs` as parsed: the detector's options; failed_runs reads its active states too. */
export type StuckRunsConfig = z.output<typeof stuckRunsConfig>;

/** The stuck_runs check. Severity: warning everywhere. */
export const stuckRunsCheck = defineCheck({
  name: 'stuck_runs',
  job: 'runs',
  config: stuckRunsConfig,
  detect: stuckRuns,
  // The run's own state now ("is done now"): which words mean success is failed_runs' to say.
  resolution: (alert, snapshot, options) =>
    runResolution(alert, snapshot, { succeeded: [], stillOpen: options.active_states }),
  stateLists: { record: 'run', fields: ['active_states'] },
  presentation: {
    noun: ['stuck run', 'stuck runs'],
    facts: factsFrom([
      'run',
      'running_for',
      'step',
      'step_running_for',
      'progress',
      ['last_update', 'Last update', 'time'],
    ]),
    brief: (d) => (d.running_for ? `running ${d.running_for}${d.step ? ` · step ${d.step}` : ''}` : null),
    nextStep: () =>
      "Open the run: if its step has stopped moving, read that step's log, then stop the run and start it again.",
  },
});

/**
 * When the run began: `created_at`, else its first step's `started_at`; null when unknown. A run
 * going again after a failure its failed_runs alert told of is a retry (the same run, restarted at
 * its failed step): it began when the retry did, not when the run was first created.
 */
function runStart(run: RunListItem, detail: Run | undefined, told: Told | undefined): number | null {
  const firstStart = detail?.steps.map((step) => parseTime(step.started_at)).find((t) => t !== null);
  return (told ? retrySince(run, detail, told) : null) ?? parseTime(run.created_at) ?? firstStart ?? null;
}

/** Finds runs that have been going for longer than `max_duration`. */
export function stuckRuns(snapshot: RunsSnapshot, options: StuckRunsConfig, now: number): Detection<'stuck_runs'>[] {
  const findings: Detection<'stuck_runs'>[] = [];
  for (const run of snapshot.runs) {
    const detail = snapshot.details.get(run.id);
    const watcher = detail?.watcher ?? null;
    // Only a run still going can be stuck: a watcher that reported failure makes it failed (failed_runs).
    const verdict = runVerdict(run, watcher, { active: options.active_states });
    if (verdict.kind !== 'active') continue;
    const waiting = verdict.why === 'watcher_waiting';
    const start = runStart(run, detail, snapshot.openFailures?.get(run.id));
    if (start === null || now - start <= options.max_duration) continue;

    const ctx = runContext(run, snapshot.apps);
    // The running step: the last one that has started (steps are listed in order), found without
    // assuming any step state word.
    const step = currentStep(detail);
    const stepStart = parseTime(step?.started_at);
    const runningFor = formatDuration(now - start);

    let summary = `${ctx.title} of ${ctx.name}${ctx.environmentSuffix} has been running for ${runningFor}`;
    if (waiting)
      summary += watcher?.progress ? `, waiting on the server: ${watcher.progress}` : ', waiting on the server';
    else if (step) summary += ` (step ${step.name})`;

    const since = new Date(start).toISOString();
    const details: Record<string, string> = { ...runDetails(run), running_for: runningFor };
    if (step) details.step = step.name;
    if (step && stepStart !== null) details.step_running_for = formatDuration(now - stepStart);
    if (watcher) details.watcher = watcher.state;
    if (watcher?.progress) details.progress = watcher.progress;
    const updated = toIso(run.updated_at);
    if (updated) details.last_update = updated;
    details.since = since;

    findings.push({
      // No step label: the step moves on while the run stays stuck, and labels should hold still.
      ...recordFinding('stuck_runs', { type: 'run', id: run.id }, ctx.labels, ctx.url),
      severity: 'warning',
      summary: oneLine(summary),
      details,
      since,
    });
  }
  return findings;
}
