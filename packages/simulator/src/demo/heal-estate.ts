/**
 * Puts a freshly seeded simulator into a healthy state before the demo's daemon first looks at it.
 *
 * The seed sprinkles a few problems over any estate (an expired certificate, a failed update, a
 * stale backup…) so the attention summary and soak tests have content. In the demo they would all
 * fire in the first seconds, before anything was staged, and bury the story. Silencing them would
 * still print "silenced" noise and leave them open; fixing them through the control interface, the
 * way an ops team would, lets the demo start from "all green" so each notification that follows
 * belongs to one staged problem.
 */
import type { SimProblem } from '../problem-finder.js';
import type { SimulatorControl } from '../simulator-control.js';
import { VOCABULARY } from '../vocabulary.js';
import {
  BAD_APP_STATES,
  BAD_SERVER_STATES,
  FAILED_UPGRADE_STATES,
  STANDBY_UPGRADE_STATES,
} from '../../../../src/config/state-words.js';

/** What {@link healEstate} fixed and what it could not. */
export interface HealReport {
  /** The problems the seed came with, as the simulator described them. */
  fixed: SimProblem[];
  /** Servers that were in a bad state and were brought back. */
  restartedServers: number;
  /** Apps that were in a bad state (stopped) and were started. */
  startedApps: number;
  /** Runs that were under way and were finished. */
  finishedRuns: number;
  /** Branches restored upstream, upgrades closed, restore points let go and services started. */
  mended: number;
  /** Problems still there afterwards (none expected; shown so a surprise is not hidden). */
  remaining: SimProblem[];
}

/** Fixes every problem the simulator knows about, one move per kind, and reports what it did. */
export function healEstate(control: SimulatorControl): HealReport {
  const found = control.problems();
  const freshBackupFor = new Set<number>();
  for (const problem of found) {
    switch (problem.kind) {
      case 'failed_run':
        // The run is the newest of its app and action: finishing it is "the fix was deployed".
        control.setRunState(problem.id, { state: 'done' });
        break;
      case 'certificate_expired':
      case 'certificate_expiring':
        control.checks.certificates.renew(problem.id);
        break;
      case 'public_check_failed':
        control.checks.url_checks.pass(problem.id);
        break;
      case 'backup_stale':
      case 'backup_critical':
      case 'offsite_failed':
        // One fresh, verified, uploaded backup fixes every backup problem of an app at once.
        freshBackupFor.add(problem.appId);
        break;
      case 'backup_unverified':
        control.checks.backups.setVerified(problem.id, true);
        break;
      case 'maintenance':
        control.checks.maintenance.set(problem.appId, false);
        break;
      case 'retrying_run':
        // Not a problem yet (problems() leaves these out); the service retries it by itself.
        break;
    }
  }
  for (const appId of freshBackupFor) control.checks.backups.add(appId, { automated: true });
  // Servers in a bad state (the seed puts one in error) are not among the simulator's problems
  // but the servers check reports them: bring them back up too.
  let restarted = 0;
  for (const server of control.state.servers.values()) {
    if (!BAD_SERVER_STATES.includes(server.state)) continue;
    control.checks.servers.setState(server.id, VOCABULARY.server.running);
    restarted += 1;
  }
  // Apps in a bad state (the seed stops a few) are no problem to the simulator either, but the
  // app_state check reports them: start them.
  let started = 0;
  for (const app of control.state.apps.values()) {
    if (!BAD_APP_STATES.includes(app.state)) continue;
    control.checks.app_state.set(app.id, VOCABULARY.app.running);
    started += 1;
  }
  // Branches deleted upstream, failed or standby upgrades, held restore points and services in
  // error are no problem to the simulator either, but the branches, upgrades, restore_points and
  // installers checks report them: mend them as a team would.
  let mended = 0;
  for (const app of control.state.apps.values()) {
    for (const repo of app.repositories.filter((r) => r.deletedUpstream)) {
      control.checks.branches.setRepository(app.id, { repository: repo.repository, deletedUpstream: false });
      mended += 1;
    }
    if (app.upgrade && [...FAILED_UPGRADE_STATES, ...STANDBY_UPGRADE_STATES].includes(app.upgrade.state)) {
      control.checks.upgrades.set(app.id, null);
      mended += 1;
    }
  }
  for (const point of control.state.restorePoints.values()) {
    if (!point.held) continue;
    control.checks.restore_points.setHeld(point.id, false);
    mended += 1;
  }
  for (const installer of control.state.installers.values()) {
    if (installer.state !== VOCABULARY.installer.error) continue;
    control.checks.installers.setState(installer.id, VOCABULARY.installer.running);
    mended += 1;
  }
  // Runs under way (a backup whose archive is still unverified, a deploy, a run about to retry by
  // itself) would settle during the show and raise problems nobody staged: let them finish now.
  let finished = 0;
  for (const runId of [...control.state.activeRuns]) {
    control.setRunState(runId, { state: 'done' });
    finished += 1;
  }
  // An app without any finished backup (deployed lately, or just now by the runs above) is no
  // problem to the simulator but a "no backup" to the backups check: give it its first one.
  for (const app of control.state.apps.values()) {
    if (app.state === VOCABULARY.app.deleted || app.state === VOCABULARY.app.disabled) continue;
    const hasBackup = control.state.backupIndex.byApp(app.id).some((b) => b.state === VOCABULARY.backup.done);
    if (!hasBackup) control.checks.backups.add(app.id, { automated: true });
  }
  return {
    fixed: found,
    restartedServers: restarted,
    startedApps: started,
    finishedRuns: finished,
    mended,
    remaining: control.problems(),
  };
}
