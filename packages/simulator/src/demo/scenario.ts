/**
 * The demo's story: a timeline of problems that happen and clear again at fractions of the demo's
 * duration, so `--duration 20s` and `--duration 5m` tell the same story at different speeds.
 *
 * Every move goes through the simulator's control interface, as the real service would change
 * under the watchdog: nothing here talks to the daemon. The one step that waits on the daemon is
 * the end of the failed run: the scenario lets the retried run finish only once the remediation
 * policy has actually retried it (the run is running again), so "retried automatically" is earned.
 */
import type { CheckName } from '../../../../src/detectors/registry.js';
import type { SimulatorControl } from '../simulator-control.js';
import { VOCABULARY } from '../vocabulary.js';
import type { DemoCast } from './demo-cast.js';

/** The kinds of problem the demo stages. */
export type DemoProblemKind = 'failed_run' | 'certificate' | 'stale_backup' | 'offsite' | 'url_check';

/** One staged problem: what it is called, and which check's messages about which app show it. */
export interface StagedProblem {
  kind: DemoProblemKind;
  /** How the summary names it: "failed update". */
  label: string;
  /** The check whose alerts announce it. */
  check: CheckName;
  /** The app its alerts name. */
  app: string;
  /** True when a remediation policy is expected to act on it. */
  remediated: boolean;
  /** The problem whose start step stages this one (itself, except for consequences). */
  stagedBy: DemoProblemKind;
}

/** One move of the timeline. */
export interface ScenarioStep {
  /** When, as a fraction of the duration (0 … 1). */
  at: number;
  problem: DemoProblemKind;
  phase: 'start' | 'clear';
  /** What happens, in a sentence, printed when it does. */
  says: string;
  /** Only once this holds (checked on every tick), and has held for `holdFor` of the duration. */
  when?: (control: SimulatorControl) => boolean;
  holdFor?: number;
  act(control: SimulatorControl): void;
}

/** A whole story: the problems it stages and the moves that stage and clear them. */
export interface Scenario {
  problems: StagedProblem[];
  steps: ScenarioStep[];
}

/** Hours the stale app goes without a backup: past production's 26 h limit, short of critical. */
const STALE_HOURS = 30;
/** Days left on the certificate: inside the critical threshold (3 days) of the demo config. */
const CERT_DAYS = 2;
const FAILED_STEP = 'check';
const FAILED_REASON = 'health check timed out after 120 s';
const OFFSITE_ERROR = 'upload failed: connection reset';
const PUBLIC_CHECK_CODE = 'http_502';

/** The newest finished backup of an app, which the off-site failure is about. */
function newestDoneBackupId(control: SimulatorControl, appId: number): number | null {
  for (const b of control.state.backupIndex.byApp(appId)) if (b.state === VOCABULARY.backup.done) return b.id;
  return null;
}

/** Builds the story for a cast; `retryPolicy` is the name of the policy that retries the run. */
export function buildScenario(cast: DemoCast, retryPolicy: string): Scenario {
  // The failed run's id, known once the run exists; kept in this closure, per scenario.
  let runId: number | null = null;
  const runState = (control: SimulatorControl) =>
    runId === null ? null : (control.state.runs.get(runId)?.state ?? null);
  const { runApp, certificate, staleApp, offsiteApp, publicCheck } = cast;

  const problems: StagedProblem[] = [
    {
      kind: 'failed_run',
      label: 'failed update, retried by policy',
      check: 'failed_runs',
      app: runApp.name,
      remediated: true,
      stagedBy: 'failed_run',
    },
    {
      kind: 'certificate',
      label: 'certificate near expiry',
      check: 'certificates',
      app: certificate.app.name,
      remediated: false,
      stagedBy: 'certificate',
    },
    {
      kind: 'stale_backup',
      label: 'stale backup',
      check: 'backups',
      app: staleApp.name,
      remediated: false,
      stagedBy: 'stale_backup',
    },
    {
      kind: 'offsite',
      label: 'off-site upload failed',
      check: 'backups',
      app: offsiteApp.name,
      remediated: false,
      stagedBy: 'offsite',
    },
    {
      kind: 'url_check',
      label: 'outside check failing',
      check: 'url_checks',
      app: publicCheck.app.name,
      remediated: false,
      stagedBy: 'url_check',
    },
  ];

  const steps: ScenarioStep[] = [
    {
      at: 0.04,
      problem: 'failed_run',
      phase: 'start',
      says: `An update of ${runApp.name} (${runApp.environmentType}) fails at step ${FAILED_STEP}: ${FAILED_REASON}. Policy ${retryPolicy} may retry it.`,
      act(control) {
        runId = control.addRun({
          appId: runApp.id,
          action: 'update',
          state: 'error',
          failedStep: FAILED_STEP,
          reason: FAILED_REASON,
          startedAgoMs: 3 * 60_000,
        }).id;
      },
    },
    {
      at: 0.05,
      problem: 'failed_run',
      phase: 'clear',
      says: `The retried update of ${runApp.name} passes its health check and finishes.`,
      // Running again means the policy's runs.retry reached the service.
      when: (control) => runState(control) === VOCABULARY.run.running,
      holdFor: 0.04,
      act(control) {
        if (runId !== null && runState(control) === VOCABULARY.run.running)
          control.setRunState(runId, { state: 'done' });
      },
    },
    {
      at: 0.12,
      problem: 'certificate',
      phase: 'start',
      says: `The certificate of ${certificate.url} (${certificate.app.name}) now expires in ${CERT_DAYS} days: its renewal has been failing.`,
      act: (control) => void control.checks.certificates.expire(certificate.id, { inDays: CERT_DAYS }),
    },
    {
      at: 0.2,
      problem: 'stale_backup',
      phase: 'start',
      says: `${staleApp.name} has had no backup for ${STALE_HOURS} h (production allows 26 h).`,
      act: (control) => void control.checks.backups.age(staleApp.id, { hours: STALE_HOURS }),
    },
    {
      at: 0.28,
      problem: 'offsite',
      phase: 'start',
      says: `The off-site copy of ${offsiteApp.name}'s newest backup fails to upload: ${OFFSITE_ERROR}.`,
      act(control) {
        const backupId =
          newestDoneBackupId(control, offsiteApp.id) ??
          control.checks.backups.add(offsiteApp.id, { automated: true }).id;
        control.checks.backups.failOffsite(backupId, OFFSITE_ERROR);
      },
    },
    {
      at: 0.36,
      problem: 'url_check',
      phase: 'start',
      says: `${publicCheck.url} (${publicCheck.app.name}) stops answering from outside (${PUBLIC_CHECK_CODE}); the service's attention summary lists it too, folded into the url_checks alert: one problem, one alert.`,
      act: (control) => void control.checks.url_checks.fail(publicCheck.id, PUBLIC_CHECK_CODE),
    },
    {
      at: 0.5,
      problem: 'certificate',
      phase: 'clear',
      says: `The certificate of ${certificate.url} is renewed for 90 days.`,
      act: (control) => void control.checks.certificates.renew(certificate.id),
    },
    {
      at: 0.6,
      problem: 'stale_backup',
      phase: 'clear',
      says: `A backup of ${staleApp.name} finishes.`,
      act: (control) => void control.checks.backups.add(staleApp.id, { automated: true }),
    },
    {
      at: 0.7,
      problem: 'offsite',
      phase: 'clear',
      says: `The next backup of ${offsiteApp.name} is copied off-site without trouble.`,
      act: (control) => void control.checks.backups.add(offsiteApp.id, { automated: true }),
    },
    {
      at: 0.8,
      problem: 'url_check',
      phase: 'clear',
      says: `${publicCheck.url} answers again; the attention section empties.`,
      act: (control) => void control.checks.url_checks.pass(publicCheck.id),
    },
  ];
  return { problems, steps };
}
