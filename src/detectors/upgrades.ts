/**
 * upgrades: an app's open version upgrade (`apps.get` `upgrade`) that failed, or that has waited in
 * standby longer than `standby_max_duration`.
 *
 * - **Failed** (a state of `failed_states`, default the simulator's `failed`): fires at once;
 *   critical for a production upgrade of a production app, warning for a test upgrade or elsewhere.
 * - **Standby** (a state of `standby_states`, default `standby`): while an upgrade waits there, the
 *   app's restarts and updates are refused (`upgrade_standby`). The API says the state, not since
 *   when, so the detector reports it at once with `holdForMs` = `standby_max_duration` and the
 *   lifecycle fires it only once it has seen it that long (as maintenance does); a warning.
 * - **Stuck** (a state of `stuck_states`, default `requested` and `testing`): steps the platform
 *   moves on from by itself. An upgrade still there after `stuck_max_duration` (held the same way)
 *   is stuck: the app it upgrades is neither on its new version nor free of the upgrade; a warning.
 *   `stuck_states: []` leaves them alone.
 *
 * - **One problem, one alert.** An upgrade is carried out by a run (the simulator's `app_upgrade`,
 *   action `upgrade`); when that run fails, failed_runs reports it with its step, reason, log lines
 *   and restore point. A failed upgrade whose app (old or new) has an open failed_runs alert about
 *   a run of one of `run_words` is folded into that alert (named in the cycle's log). Jobs run on
 *   their own schedules, so a failed upgrade waits `fold_wait` for its run's alert before it fires
 *   on its own (a failed upgrade whose run did not fail, or whose run is not read).
 *
 * Both the old app and the new one show the same upgrade, so there is one finding per upgrade (by
 * its id), labelled with the app it upgrades (`source_app_id`) when that app was read, else with
 * the new app that shows it. Read by the
 * maintenance job from the `apps.get` it makes of every app anyway: no request of its own. An
 * upgrade that moves on, or is gone, resolves it.
 */
import type { z } from 'zod';
import type { OpenSubject } from '../lib/alert-vocabulary.js';
import type { MaintenanceSnapshot } from '../collectors/snapshot.js';
import type { MaintenanceApp } from '../collectors/views.js';
import { checkConfig, otherStatesSchema, stateListSchema, wordListSchema } from '../config/check-config.js';
import { durationSchema } from '../config/duration.js';
import {
  FAILED_UPGRADE_STATES,
  OTHER_UPGRADE_STATES,
  STANDBY_UPGRADE_STATES,
  UNDER_WAY_UPGRADE_STATES,
} from '../config/state-words.js';
import { formatDuration } from '../lib/format-duration.js';
import { appContext } from './app-context.js';
import { appFinding } from './app-finding.js';
import { recordResolution } from './record-resolution.js';
import { defineCheck } from './define-check.js';
import { productionCritical } from './environment-severity.js';
import type { DetectorResult, FoldedFinding } from './detector-result.js';
import { heldFromFirstSighting, type Detection } from './finding.js';
import { runContextAsk } from './run-context.js';
import { fingerprint } from './fingerprint.js';
import { factsFrom } from './presentation.js';

/** `checks.upgrades`. */
export const upgradesConfig = checkConfig({
  failed_states: stateListSchema(FAILED_UPGRADE_STATES).describe('Upgrade states in which an upgrade failed.'),
  standby_states: stateListSchema(STANDBY_UPGRADE_STATES).describe(
    "Upgrade states in which an upgrade waits in standby (the app's restarts and updates are refused).",
  ),
  stuck_states: wordListSchema(UNDER_WAY_UPGRADE_STATES).describe(
    'Upgrade states of an upgrade under way, which the platform moves on from by itself: one that stays longer than stuck_max_duration is alerted as stuck. Empty: not alerted.',
  ),
  other_states: otherStatesSchema(OTHER_UPGRADE_STATES, 'Upgrade'),
  standby_max_duration: durationSchema
    .prefault('1d')
    .describe('An upgrade waiting in standby longer than this is alerted.'),
  stuck_max_duration: durationSchema
    .prefault('6h')
    .describe('An upgrade that stays in one of stuck_states longer than this is alerted.'),
  run_words: wordListSchema(['upgrade']).describe(
    "The runs that carry out a version upgrade, by workflow or action (the simulator's: workflow app_upgrade, action upgrade). A failed upgrade whose app has an open failed_runs alert about such a run is folded into that alert: one problem, one alert.",
  ),
  fold_wait: durationSchema
    .prefault('5m')
    .describe(
      "How long a failed upgrade waits for the failed_runs alert of its run (the runs job's schedule is its own) before it alerts on its own; 0s alerts at once.",
    ),
});

/** The upgrades check. */
export const upgradesCheck = defineCheck({
  name: 'upgrades',
  job: 'maintenance',
  config: upgradesConfig,
  detect: upgrades,
  stateLists: { record: 'upgrade', fields: ['failed_states', 'standby_states', 'stuck_states', 'other_states'] },
  relevant: ({ app }, options) => kindOf(app, options) !== null,
  resolution: (alert, snapshot) =>
    recordResolution(alert, 'app', snapshot.apps, (app) =>
      app.upgrade ? `the upgrade is ${app.upgrade.state} now` : 'the upgrade is closed',
    ),
  presentation: {
    noun: ['upgrade in trouble', 'upgrades in trouble'],
    facts: factsFrom([
      'state',
      ['from', 'From version'],
      ['to', 'To version'],
      'purpose',
      'new_app',
      ['max_duration', 'Allowed in standby'],
      ['max_stuck', 'Allowed in that state'],
    ]),
    brief: (d) => (d.from && d.to && d.state ? `${d.from} → ${d.to} ${d.state}` : null),
    nextStep: ({ labels }) => NEXT_STEPS[labels.problem as UpgradeProblem] ?? null,
  },
});

/** `checks.upgrades` as parsed: the detector's options. */
export type UpgradesConfig = z.output<typeof upgradesConfig>;

/** Which of an upgrade's problems a finding is (its `problem` label). */
export type UpgradeProblem = 'failed' | 'standby' | 'stuck';

/** What to do next about each problem. */
const NEXT_STEPS: Record<UpgradeProblem, string> = {
  failed: "Read the app's upgrade log for why it failed, then retry or cancel the upgrade on the platform.",
  standby: 'Finish or cancel the upgrade on the platform: the app cannot be restarted or updated meanwhile.',
  stuck:
    "Open the upgrade on the platform: read the app's upgrade log for what it waits on, then move it on or cancel it.",
};

/** Whether the app's open upgrade failed, waits in standby or may be stuck; null when none of them. */
function kindOf(app: MaintenanceApp, options: UpgradesConfig): UpgradeProblem | null {
  const state = app.upgrade?.state;
  if (state === undefined) return null;
  if (options.failed_states.includes(state)) return 'failed';
  if (options.standby_states.includes(state)) return 'standby';
  return options.stuck_states.includes(state) ? 'stuck' : null;
}

/**
 * Who already reports the failed upgrade: the open failed_runs alert about a run of `runWords` on
 * one of `appIds` (the app upgraded, or its new app), as "failed_runs (run 123)"; else undefined.
 */
function failedRunReporting(
  reported: readonly OpenSubject[] | undefined,
  appIds: readonly (number | null)[],
  runWords: readonly string[],
): string | undefined {
  for (const open of reported ?? []) {
    if (open.check !== 'failed_runs' || !open.details) continue;
    const run = runContextAsk({ subject: open.subject, details: open.details });
    if (run && appIds.includes(run.appId) && (runWords.includes(run.workflow) || runWords.includes(run.action)))
      return `failed_runs (run ${run.runId})`;
  }
  return undefined;
}

/**
 * Finds failed upgrades (each folded into its failed run's alert where one reports it, else held
 * `fold_wait`), upgrades in standby (each held back by the lifecycle for `standby_max_duration`) and
 * upgrades under way (held `stuck_max_duration`). The fingerprint names the problem: an upgrade that moves
 * from testing to standby starts a new wait, since the platform moved it on.
 */
export function upgrades(
  snapshot: MaintenanceSnapshot,
  options: UpgradesConfig,
): DetectorResult<Detection<'upgrades'>> {
  // One app per upgrade: the app it upgrades when read, else the first that shows it.
  const byUpgrade = new Map<number, MaintenanceApp>();
  for (const app of snapshot.apps) {
    if (!app.upgrade || kindOf(app, options) === null) continue;
    const seen = byUpgrade.get(app.upgrade.id);
    if (!seen || app.id === app.upgrade.source_app_id) byUpgrade.set(app.upgrade.id, app);
  }
  const findings: Detection<'upgrades'>[] = [];
  const incomplete: string[] = [];
  const folded: FoldedFinding[] = [];
  for (const app of byUpgrade.values()) {
    const upgrade = app.upgrade!;
    const kind = kindOf(app, options)!;
    const fp = fingerprint('upgrades', kind, upgrade.id);
    const reporter =
      kind === 'failed'
        ? failedRunReporting(snapshot.reported, [upgrade.source_app_id, upgrade.new_app_id], options.run_words)
        : undefined;
    if (reporter !== undefined) {
      // Left as it is when it had fired already: neither resolved nor said again.
      folded.push({ fingerprint: fp, reason: `reported by ${reporter}` });
      incomplete.push(fp);
      continue;
    }
    const source = app.id === upgrade.source_app_id;
    const { name } = appContext(app);
    // The app it upgrades, named as every other check names it when this is its record.
    const what = `Upgrade of ${source ? name : upgrade.source_app} from ${upgrade.from_version} to ${upgrade.to_version}`;
    const details: Record<string, string> = {
      app: source ? name : upgrade.source_app,
      upgrade: `#${upgrade.id}`,
      state: upgrade.state,
      from: upgrade.from_version,
      to: upgrade.to_version,
      purpose: upgrade.purpose,
    };
    if (upgrade.new_app) details.new_app = upgrade.new_app;
    const holdMs =
      kind === 'standby' ? options.standby_max_duration : kind === 'stuck' ? options.stuck_max_duration : 0;
    const max = formatDuration(holdMs);
    if (kind === 'standby') details.max_duration = max;
    if (kind === 'stuck') details.max_stuck = max;
    // Only a failed upgrade for production pages as its app's environment says; the rest warn.
    const severity =
      kind === 'failed' && upgrade.purpose === 'production' ? productionCritical(app.environment_type) : 'warning';
    findings.push({
      ...appFinding('upgrades', app, severity, { purpose: upgrade.purpose, problem: kind }),
      fingerprint: fp,
      summary:
        kind === 'failed'
          ? `${what} (${upgrade.purpose}) failed`
          : kind === 'standby'
            ? `${what} has waited in standby for more than ${max}: the app's restarts and updates are refused until it moves on`
            : `${what} (${upgrade.purpose}) has been ${upgrade.state} for more than ${max}: it looks stuck`,
      details,
      // The source does not say when the upgrade got there; the lifecycle's first sighting stands in.
      since: null,
      ...(kind !== 'failed' && heldFromFirstSighting(holdMs, `checks.upgrades.${kind}_max_duration`)),
      ...(kind === 'failed' &&
        options.fold_wait > 0 && {
          holdForMs: options.fold_wait,
          holdReason: `waiting up to ${formatDuration(options.fold_wait, 'exact')} (checks.upgrades.fold_wait) for failed_runs to report its run`,
        }),
    });
  }
  return folded.length > 0 ? { findings, incomplete, folded } : { findings, incomplete };
}
