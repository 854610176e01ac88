/**
 * The control interface of a running simulator: time, faults, the request log and scenario
 * helpers that put the service into a chosen state. Tests call it in-process; out-of-process
 * tests and the standalone command reach it as `POST {baseUrl}/_sim/<method>` with the admin token.
 */
import { checkBackupOutcome, type BackupOutcome } from './backup-outcome.js';
import { checkListGrading, type ListGrading } from './read-handlers.js';
import type {
  App,
  Backup,
  Installer,
  RestorePoint,
  Run,
  Server,
  UrlRecord,
  WatcherState,
} from '../../../src/api/schemas.js';
import type { FaultSpec, FaultTarget } from './fault-injector.js';
import type { ProblemKind, SimProblem } from './problem-finder.js';
import { Prng } from './prng.js';
import type { RateLimitSpec } from './rate-limiter.js';
import { checkMaxLimit } from './request-params.js';
import { AUTO_RETRY_DELAY_MS, leftAsBefore, type FailDirective } from './run-engine.js';
import {
  runRec,
  upgradeRec,
  type AppRec,
  type BackupRec,
  type RestorePointRec,
  type RunRec,
  type SimState,
  type StepRec,
  type UrlRec,
} from './sim-state.js';
import type { RequestRecord, SimulatorCore } from './simulator-core.js';
import { checkTimeFormat, type TimeFormat } from './time-format.js';
import { PUBLIC_CHECK_PASSED, STEP_FAILURE_REASONS, VOCABULARY, WORKFLOWS, type WorkflowName } from './vocabulary.js';
import { isGone } from './views.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Options of {@link SimulatorControl.addRun}. */
export interface AddRunOptions {
  appId: number;
  action?: string;
  workflow?: WorkflowName;
  state: 'error' | 'running' | 'queued' | 'done';
  /** Step name or index where an error run failed or a running run is; default the last step (error) or the first (running). */
  failedStep?: string | number;
  reason?: string;
  /** An error run that retries by itself after a delay. */
  retrying?: boolean;
  /** A watcher; a waiting one waits until setRunState says otherwise. */
  watcher?: { state: WatcherState; progress?: string | null; reason?: string | null };
  /** How long ago the run was created; default 5 minutes. */
  startedAgoMs?: number;
}

/** Changes of {@link SimulatorControl.setRunState}. */
export interface RunStatePatch {
  state?: 'error' | 'running' | 'queued' | 'done';
  retrying?: boolean;
  failedStep?: string | number;
  reason?: string;
  watcher?: { state: WatcherState; progress?: string | null; reason?: string | null };
}

/** Options of {@link SimulatorControl.addBackup}. */
export interface AddBackupOptions {
  hoursAgo?: number;
  verified?: boolean;
  state?: string;
  format?: 'zip' | 'dump';
  automated?: boolean;
  offsiteError?: string;
  /** Its size; default the app's newest backup's (512 MB for the first). */
  sizeMb?: number;
  /** `none`: no off-site copy at all; `uploading`: a copy whose upload has not ended (no `uploaded_at`). */
  offsite?: 'none' | 'uploading';
}

/** Changes of {@link SimulatorControl.setRepository}. */
export interface RepositoryPatch {
  /** The repository's name; default the app's main repository. */
  repository?: string;
  deletedUpstream?: boolean;
  behind?: boolean;
}

/** Options of {@link SimulatorControl.addRestorePoint}. */
export interface AddRestorePointOptions {
  outcome?: RestorePointRec['outcome'];
  held?: boolean;
  action?: 'update' | 'update_modules';
  hoursAgo?: number;
}

/** Counts per resource, and `streams`: huge and endless bodies being written now (each ends when its client goes). */
export type SimStats = Record<
  | 'namespaces'
  | 'projects'
  | 'servers'
  | 'apps'
  | 'urls'
  | 'installers'
  | 'runs'
  | 'activeRuns'
  | 'backups'
  | 'restorePoints'
  | 'streams',
  number
>;

/** Drives a running simulator. Every method first brings runs up to the current simulated time. */
export class SimulatorControl {
  private churns = 0;

  constructor(private readonly core: SimulatorCore) {}

  /** The simulator's records, read-only for tests. */
  get state(): Readonly<SimState> {
    return this.core.state;
  }

  // ---- time ----
  /** Simulator time (ms since the epoch). */
  now(): number {
    return this.core.tick();
  }

  /** Moves simulator time forward; returns the new time. */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new Error(`advance: ms must be a non-negative number, got ${String(ms)}`);
    this.core.offset += ms;
    return this.core.tick();
  }

  // ---- faults and the request log ----
  /** Sets the fault of one function or of every function ('*'). */
  setFault(target: FaultTarget, fault: FaultSpec): void {
    this.core.faults.set(target, fault);
  }

  /** Removes every fault. */
  clearFaults(): void {
    this.core.faults.clear();
  }

  /** The requests answered since the last reset, oldest first. */
  requests(): RequestRecord[] {
    return [...this.core.requestLog];
  }

  /** Forgets the request log. */
  resetRequests(): void {
    this.core.requestLog.length = 0;
  }

  // ---- the service's modes ----
  /** Sets the largest `limit` a call may give. */
  setMaxLimit(maxLimit: number): { maxLimit: number } {
    this.core.maxLimit = checkMaxLimit(maxLimit);
    return { maxLimit };
  }

  /** Sets whether lists are graded by the token's readable environments (reads by id always are). */
  setListGrading(grading: ListGrading): { listGrading: ListGrading } {
    this.core.reads.listGrading = checkListGrading(grading);
    return { listGrading: grading };
  }

  /** Sets how every answer writes its timestamps from now on. */
  setTimeFormat(format: TimeFormat): { timeFormat: TimeFormat } {
    this.core.times.format = checkTimeFormat(format);
    return { timeFormat: format };
  }

  /** Sets the rate limit (null: none); every token's bucket starts full. */
  setRateLimit(spec: RateLimitSpec | null): { rateLimit: Required<RateLimitSpec> | null } {
    this.core.rateLimiter.set(spec);
    return { rateLimit: this.core.rateLimiter.current };
  }

  // ---- runs ----
  /** Adds a run in a given state; scenario runs stay as set, except a retrying one, which retries by itself. */
  addRun(options: AddRunOptions): Run {
    const now = this.core.tick();
    const app = this.app(options.appId);
    const workflow = options.workflow ?? workflowOf(options.action);
    const createdAt = now - (options.startedAgoMs ?? 5 * 60_000);
    const names = WORKFLOWS[workflow].steps;
    const stepIndex = stepIndexOf(names, options.failedStep, options.state === 'error' ? names.length - 1 : 0);
    const run = this.newRun(app, workflow, createdAt, now);
    const steps = run.steps as StepRec[];
    const reason = options.reason ?? STEP_FAILURE_REASONS[0];
    if (options.state === 'done') {
      this.core.engine.finish(run, Math.min(now, run.updatedAt), 'done');
      if (WORKFLOWS[workflow].watcher) run.watcher = watcherRec('completed', null, null, run.updatedAt);
    } else if (options.state === 'error') {
      const upTo = options.watcher ? steps.length : stepIndex;
      steps.forEach((s, i) => {
        if (i < upTo) s.state = VOCABULARY.step.done;
        else if (i === upTo) Object.assign(s, { state: VOCABULARY.step.error, reason });
        else Object.assign(s, { state: VOCABULARY.step.pending, startedAt: null, updatedAt: null });
      });
      if (options.watcher)
        run.watcher = watcherRec(
          options.watcher.state,
          options.watcher.progress ?? null,
          options.watcher.reason ?? reason,
          run.updatedAt,
        );
      run.state = VOCABULARY.run.error;
      run.updatedAt = steps[Math.min(upTo, steps.length - 1)]?.updatedAt ?? run.updatedAt;
      if (options.retrying) {
        run.retrying = true;
        run.autoRetryAt = now + AUTO_RETRY_DELAY_MS;
        this.core.state.activeRuns.add(run.id);
      }
    } else if (options.state === 'running') {
      const upTo = options.watcher ? steps.length : stepIndex;
      steps.forEach((s, i) => {
        if (i < upTo) s.state = VOCABULARY.step.done;
        else if (i === upTo) Object.assign(s, { state: VOCABULARY.step.running, updatedAt: s.startedAt });
        else Object.assign(s, { state: VOCABULARY.step.pending, startedAt: null, updatedAt: null });
      });
      if (options.watcher)
        run.watcher = {
          ...watcherRec(
            options.watcher.state,
            options.watcher.progress ?? null,
            options.watcher.reason ?? null,
            run.updatedAt,
          ),
          durationMs: null,
        };
      run.state = VOCABULARY.run.running;
      run.updatedAt = steps[Math.min(upTo, steps.length - 1)]?.startedAt ?? run.updatedAt;
    } else {
      for (const s of steps) Object.assign(s, { state: VOCABULARY.step.pending, startedAt: null, updatedAt: null });
      run.state = VOCABULARY.run.queued;
      run.updatedAt = createdAt;
    }
    this.settleRestorePoint(app, run, options.state === 'error' ? (options.watcher ? null : stepIndex) : undefined);
    return this.core.views.run(run);
  }

  /**
   * As a real update leaves one: the restore point of a scenario's update run, applied when it is
   * done, kept or failed when it failed (by where: before update_modules the app is as before),
   * running while it runs. `failedAt`: the failed step's index (null: after its steps); undefined
   * when the run did not fail.
   */
  private settleRestorePoint(app: AppRec, run: RunRec, failedAt: number | null | undefined): void {
    const action = run.action === 'update' || run.action === 'update_modules' ? run.action : null;
    if (action === null) return;
    const point = this.newRestorePoint(app, run.createdAt, action, run.id);
    const done = run.state === VOCABULARY.run.done;
    if (failedAt !== undefined) point.outcome = leftAsBefore(run.workflow, failedAt) ? 'kept' : 'failed';
    else if (done) Object.assign(point, { outcome: 'applied', instantUndo: true, keptUntil: run.updatedAt + 7 * DAY });
  }

  /** The next run started by a change or retry that matches fails at a step. */
  failNextRun(directive: FailDirective = {}): void {
    this.core.engine.addFailDirective(directive);
  }

  /** Changes a run: ends it (done / error), restarts it (running), sets retrying, or makes its watcher report. */
  setRunState(runId: number, patch: RunStatePatch): Run {
    const now = this.core.tick();
    const run = this.core.state.runs.get(runId);
    if (!run) throw new Error(`setRunState: run ${runId} not found`);
    const engine = this.core.engine;
    const steps = engine.materialize(run);
    if (patch.watcher) {
      if (patch.watcher.state === 'waiting') {
        run.watcher = { ...watcherRec('waiting', patch.watcher.progress ?? null, null, now), durationMs: null };
        for (const s of steps)
          if (s.state !== VOCABULARY.step.done)
            Object.assign(s, { state: VOCABULARY.step.done, startedAt: s.startedAt ?? now, updatedAt: now });
        run.state = VOCABULARY.run.running;
      } else {
        run.watcher ??= watcherRec('waiting', null, null, now);
        engine.reportWatcher(run, patch.watcher.state, patch.watcher.reason ?? patch.reason ?? null, now);
      }
    }
    if (patch.state === 'done') engine.finish(run, now, 'done');
    if (patch.state === 'error') {
      if (patch.failedStep !== undefined) {
        const at = stepIndexOf(
          steps.map((s) => s.name),
          patch.failedStep,
          steps.length - 1,
        );
        steps.forEach((s, i) => {
          if (i < at)
            Object.assign(s, {
              state: VOCABULARY.step.done,
              startedAt: s.startedAt ?? now,
              updatedAt: s.updatedAt ?? now,
            });
          if (i === at)
            Object.assign(s, { state: VOCABULARY.step.running, startedAt: s.startedAt ?? now, reason: null });
          if (i > at)
            Object.assign(s, { state: VOCABULARY.step.pending, startedAt: null, updatedAt: null, reason: null });
        });
        run.watcher = null;
      }
      engine.finish(run, now, 'error', patch.reason ?? STEP_FAILURE_REASONS[0]);
    }
    if (patch.state === 'running' && run.state === VOCABULARY.run.error) engine.restartFromFailure(run, now);
    if (patch.state === 'queued') {
      run.state = VOCABULARY.run.queued;
      run.updatedAt = now;
    }
    if (patch.retrying !== undefined && run.state === VOCABULARY.run.error) {
      run.retrying = patch.retrying;
      run.autoRetryAt = patch.retrying ? now + AUTO_RETRY_DELAY_MS : null;
      if (patch.retrying) this.core.state.activeRuns.add(run.id);
      else this.core.state.activeRuns.delete(run.id);
    }
    return this.core.views.run(run);
  }

  // ---- URLs ----
  /** Sets a certificate to end in `inDays` days (negative: already expired); the status follows. */
  expireCertificate(urlId: number, options: { inDays: number }): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    url.sslFixed = null;
    url.sslExpiresAt = now + options.inDays * DAY;
    return this.core.views.url(url, now);
  }

  /** Renews a certificate for 90 days. */
  renewCertificate(urlId: number): UrlRecord {
    return this.expireCertificate(urlId, { inDays: 90 });
  }

  /** The outside check of a URL fails with this code. */
  failPublicCheck(urlId: number, code: string): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    Object.assign(url, { publicCheck: 'failed', publicCheckCode: code, publicCheckedAt: now, checkStopped: false });
    return this.core.views.url(url, now);
  }

  /**
   * The outside check of a URL did not run: `public_check` null, `code` saying why (null: nothing
   * said), the last check `hoursAgo` (null: never checked).
   */
  skipPublicCheck(urlId: number, code: string | null, options: { hoursAgo?: number | null } = {}): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    const hoursAgo = options.hoursAgo ?? null;
    Object.assign(url, {
      publicCheck: null,
      publicCheckCode: code,
      publicCheckedAt: hoursAgo === null ? null : now - hoursAgo * HOUR,
      checkStopped: true,
    });
    return this.core.views.url(url, now);
  }

  /** The outside check of a URL stopped running `hoursAgo`: its last verdict stays, its time no longer moves. */
  stopPublicCheck(urlId: number, options: { hoursAgo: number }): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    Object.assign(url, { publicCheckedAt: now - options.hoursAgo * HOUR, checkStopped: true });
    return this.core.views.url(url, now);
  }

  /** The service reports the certificate `error` or `unknown` whatever its date; null: the date decides again. */
  setSslStatus(urlId: number, status: 'error' | 'unknown' | null): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    url.sslFixed = status;
    return this.core.views.url(url, now);
  }

  /** The outside check of a URL passes. */
  passPublicCheck(urlId: number): UrlRecord {
    const now = this.core.tick();
    const url = this.url(urlId);
    Object.assign(url, {
      publicCheck: 'passed',
      publicCheckCode: PUBLIC_CHECK_PASSED,
      publicCheckedAt: now,
      checkStopped: false,
    });
    return this.core.views.url(url, now);
  }

  // ---- backups ----
  /** Shifts an app's backups back so the newest finished one is `hours` old; last_backup_at and backup_health follow. */
  ageBackups(appId: number, options: { hours: number }): App {
    const now = this.core.tick();
    const app = this.app(appId);
    const newest = this.core.views.newestDoneBackup(app.id);
    if (newest) {
      const delta = now - options.hours * HOUR - newest.takenAt;
      for (const b of [...this.core.state.backupIndex.byApp(app.id)]) {
        this.core.state.backupIndex.reposition(b, (rec) => {
          rec.takenAt += delta;
          for (const o of rec.offsite ?? []) if (o.uploadedAt !== null) o.uploadedAt += delta;
        });
      }
    }
    return this.core.views.app(app, now);
  }

  /** Adds a backup to an app (default: finished now, verified, copied off-site). */
  addBackup(appId: number, options: AddBackupOptions = {}): Backup {
    const now = this.core.tick();
    const app = this.app(appId);
    const state = this.core.state;
    const takenAt = now - (options.hoursAgo ?? 0) * HOUR;
    const backup: BackupRec = {
      id: state.nextId('backup'),
      appId: app.id,
      nsId: app.nsId,
      takenAt,
      format: options.format ?? 'zip',
      sizeMb: options.sizeMb ?? state.backupIndex.byApp(app.id)[0]?.sizeMb ?? 512,
      automated: options.automated ?? false,
      state: options.state ?? VOCABULARY.backup.done,
      verified: options.verified ?? true,
      offsite: null,
    };
    if (options.offsiteError) backup.offsite = [this.failedCopy(backup, options.offsiteError)];
    else if (options.offsite === 'none') backup.offsite = [];
    else if (options.offsite === 'uploading')
      backup.offsite = [{ ...this.failedCopy(backup, ''), state: VOCABULARY.offsite.uploading, error: null }];
    state.backups.set(backup.id, backup);
    state.backupIndex.add(backup);
    return this.core.views.backup(backup, now);
  }

  /** The off-site copy of a backup failed to upload. */
  failOffsite(backupId: number, error: string): Backup {
    const now = this.core.tick();
    const backup = this.backup(backupId);
    backup.offsite = [this.failedCopy(backup, error)];
    return this.core.views.backup(backup, now);
  }

  /**
   * How the backups made from now on end after their run is done (`backup-outcome.ts`): verified
   * and copied off-site (the default), left unverified, or their off-site copy failed; at once, or
   * `settleMs` later.
   */
  setBackupOutcome(spec: Partial<BackupOutcome>): BackupOutcome {
    this.core.tick();
    this.core.engine.backupSettling.outcome = checkBackupOutcome(spec);
    return this.core.engine.backupSettling.outcome;
  }

  /** Marks a backup verified or not. */
  setVerified(backupId: number, verified: boolean): Backup {
    const now = this.core.tick();
    const backup = this.backup(backupId);
    backup.verified = verified;
    return this.core.views.backup(backup, now);
  }

  // ---- apps, servers, service ----
  /** Puts an app in or out of maintenance at once (no run). */
  setMaintenance(appId: number, on: boolean): App {
    const now = this.core.tick();
    const app = this.app(appId);
    app.maintenance = on;
    return this.core.views.app(app, now);
  }

  /** The app stops answering (its item in the dashboard's "Apps not answering"), or answers again. */
  setAnswering(appId: number, answering: boolean): App {
    const now = this.core.tick();
    const app = this.app(appId);
    if (answering) delete app.notAnswering;
    else app.notAnswering = true;
    return this.core.views.app(app, now);
  }

  /**
   * Deletes an app: it leaves `apps.list` (still given with `include_deleted=true`, state deleted)
   * and its URLs leave `urls.list`; its runs and backups stay on record.
   */
  deleteApp(appId: number): App {
    const now = this.core.tick();
    const app = this.app(appId);
    app.state = VOCABULARY.app.deleted;
    for (const urlId of app.urlIds) this.core.state.urls.delete(urlId);
    app.urlIds = [];
    app.updatedAt = now;
    return this.core.views.app(app, now);
  }

  /**
   * Disables a project: it says `disabled` true, and its apps are disabled with it (they leave
   * `apps.list` but for `include_deleted=true`, and their URLs leave `urls.list`).
   */
  disableProject(projectId: number): { id: number; disabled: true; apps: number[] } {
    const now = this.core.tick();
    const project = this.core.state.projects.get(projectId);
    if (!project) throw new Error(`no project ${projectId}`);
    project.disabled = true;
    const apps = [...this.core.state.apps.values()].filter((a) => a.projectId === projectId && !isGone(a.state));
    for (const app of apps) {
      app.state = VOCABULARY.app.disabled;
      for (const urlId of app.urlIds) this.core.state.urls.delete(urlId);
      app.urlIds = [];
      app.updatedAt = now;
    }
    return { id: projectId, disabled: true, apps: apps.map((a) => a.id) };
  }

  /** Sets an app's state (e.g. error, stopped), in the simulator's own words. */
  setAppState(appId: number, state: string): App {
    const now = this.core.tick();
    const app = this.app(appId);
    app.state = state;
    return this.core.views.app(app, now);
  }

  /**
   * Changes one repository of an app (by name; default its main one): `deletedUpstream` marks its
   * branch deleted upstream (the next update cannot pull), `behind` true pushes a new commit to the
   * branch so the deployed one is behind, false deploys the branch head.
   */
  setRepository(appId: number, patch: RepositoryPatch): App {
    const now = this.core.tick();
    const app = this.app(appId);
    const repo = patch.repository
      ? app.repositories.find((r) => r.repository === patch.repository)
      : (app.repositories.find((r) => r.main) ?? app.repositories[0]);
    if (!repo) throw new Error(`setRepository: app ${appId} has no repository ${patch.repository ?? '(main)'}`);
    if (patch.deletedUpstream !== undefined) repo.deletedUpstream = patch.deletedUpstream;
    if (patch.behind === true) repo.headSha = new Prng(this.core.seed * 1000 + appId + now).hex(40);
    if (patch.behind === false) repo.deployedSha = repo.headSha;
    repo.checkedAt = now;
    return this.core.views.app(app, now);
  }

  /**
   * Gives an app an open version upgrade in `state` (e.g. testing, standby, failed), from its
   * version to the next major one, or takes it away (`null`). An open upgrade keeps its id and
   * versions when only its state changes.
   */
  setUpgrade(appId: number, state: string | null, options: { purpose?: 'test' | 'production' } = {}): App {
    const now = this.core.tick();
    const app = this.app(appId);
    if (state === null) app.upgrade = null;
    else if (app.upgrade) Object.assign(app.upgrade, { state, purpose: options.purpose ?? app.upgrade.purpose });
    else app.upgrade = upgradeRec(this.core.state, app, state, options.purpose ?? 'test');
    return this.core.views.app(app, now);
  }

  /**
   * Adds a restore point to an app, as a change of `action` (default update) would leave it:
   * `outcome` applied (default), kept (the change failed, the app left as before), failed (the
   * change failed part-way) or running; `held` when the app was rolled back to it (auto-updates wait).
   */
  addRestorePoint(appId: number, options: AddRestorePointOptions = {}): RestorePoint {
    const now = this.core.tick();
    const outcome = options.outcome ?? 'applied';
    const point = this.newRestorePoint(this.app(appId), now - (options.hoursAgo ?? 0) * HOUR, options.action, null);
    Object.assign(point, {
      outcome,
      held: options.held ?? false,
      instantUndo: outcome === 'applied',
      keptUntil: outcome === 'running' ? null : point.at + 7 * DAY,
    });
    return this.core.views.restorePoint(point);
  }
  /** Holds a restore point (the app was rolled back to it; auto-updates wait) or lets it go. */
  setRestorePointHeld(pointId: number, held: boolean): RestorePoint {
    this.core.tick();
    const point = this.core.state.restorePoints.get(pointId);
    if (!point) throw new Error(`setRestorePointHeld: restore point ${pointId} not found`);
    point.held = held;
    return this.core.views.restorePoint(point);
  }

  /** Sets a marketplace service's (installer's) state (e.g. error, stopped), in the simulator's own words. */
  setInstallerState(installerId: number, state: string): Installer {
    this.core.tick();
    const installer = this.core.state.installers.get(installerId);
    if (!installer) throw new Error(`setInstallerState: installer ${installerId} not found`);
    installer.state = state;
    return this.core.views.installer(installer);
  }

  /**
   * Gives an app another name, or its primary URL another address, as a service may hold any text
   * there (markup, a `javascript:` URL): what readers of the names must show as text.
   */
  renameApp(appId: number, patch: { name?: string; url?: string }): App {
    const now = this.core.tick();
    const app = this.app(appId);
    if (patch.name !== undefined) app.name = patch.name;
    if (patch.url !== undefined) {
      const primary = app.urlIds.map((id) => this.url(id)).find((u) => u.primary);
      if (!primary) throw new Error(`renameApp: app ${appId} has no primary URL`);
      primary.url = patch.url;
    }
    return this.core.views.app(app, now);
  }

  /** Sets a server's state (e.g. error, unreachable). */
  setServerState(serverId: number, state: string): Server {
    this.core.tick();
    const server = this.core.state.servers.get(serverId);
    if (!server) throw new Error(`setServerState: server ${serverId} not found`);
    server.state = state;
    return this.core.views.server(server, this.core.views.appCounts().byServer);
  }

  /** Every change answers writes_disabled while on. */
  setWritesDisabled(on: boolean): { writesDisabled: boolean } {
    this.core.state.writesDisabled = on;
    return { writesDisabled: on };
  }

  /** Every change of this app answers locked while on. */
  setLocked(appId: number, on: boolean): App {
    const now = this.core.tick();
    const app = this.app(appId);
    app.locked = on;
    return this.core.views.app(app, now);
  }

  /**
   * Changes about `fraction` of the apps, deterministically (seed and call count): new finished
   * backups and updates (each with its restore point), some failed updates, renewed certificates,
   * flipped outside checks.
   */
  churn(fraction: number): { apps: number; runs: number; backups: number; urls: number } {
    const now = this.core.tick();
    const state = this.core.state;
    this.churns += 1;
    const rng = new Prng(this.core.seed * 1000 + this.churns);
    const live = [...state.apps.values()].filter((a) => !isGone(a.state) && a.deployedAt !== null);
    const n = Math.min(live.length, Math.round(live.length * Math.max(0, Math.min(1, fraction))));
    const counts = { apps: 0, runs: 0, backups: 0, urls: 0 };
    const chosen = new Set<AppRec>();
    while (chosen.size < n) chosen.add(rng.pick(live));
    for (const app of chosen) {
      counts.apps += 1;
      const r = rng.next();
      if (r < 0.5) {
        this.addBackup(app.id, { hoursAgo: 0, automated: true });
        const run = this.newRun(app, 'app_backup', now - 3 * 60_000, now);
        this.core.engine.finish(run, now, 'done');
        counts.backups += 1;
        counts.runs += 1;
      } else if (r < 0.85) {
        const failed = r >= 0.75;
        const run = this.newRun(app, 'app_update', now - 4 * 60_000, now);
        // As a real update does: a restore point the run settles (applied, or failed at its check).
        run.effect = { kind: 'update', restorePointId: this.newRestorePoint(app, run.createdAt, 'update', run.id).id };
        this.core.engine.finish(run, now, failed ? 'error' : 'done', failed ? rng.pick(STEP_FAILURE_REASONS) : null);
        counts.runs += 1;
      } else if (r < 0.95) {
        const urlId = rng.pick(app.urlIds);
        const url = state.urls.get(urlId);
        if (url && url.sslFixed === null) {
          url.sslExpiresAt = now + rng.int(30, 90) * DAY;
          counts.urls += 1;
        }
      } else {
        const url = state.urls.get(rng.pick(app.urlIds));
        if (url && url.publicCheck !== null) {
          const fail = url.publicCheck === 'passed';
          Object.assign(url, {
            publicCheck: fail ? 'failed' : 'passed',
            publicCheckCode: fail ? 'http_502' : PUBLIC_CHECK_PASSED,
            publicCheckedAt: now,
          });
          counts.urls += 1;
        }
      }
    }
    return counts;
  }

  // ---- what is wrong, counts ----
  /**
   * What the simulator knows is wrong now, across every namespace: failed non-retrying runs that
   * are the newest of their app and action, expiring/expired certificates, failed outside checks,
   * stale, unverified or off-site-failed newest backups, apps in maintenance.
   */
  problems(): SimProblem[] {
    const now = this.core.tick();
    return this.core.problemFinder
      .find(now)
      .map((p) => p.problem)
      .filter((p) => p.kind !== ('retrying_run' satisfies ProblemKind));
  }

  /** Counts per resource, and the hostile bodies being written. */
  stats(): SimStats {
    this.core.tick();
    const s = this.core.state;
    return {
      namespaces: s.namespaces.size,
      projects: s.projects.size,
      servers: s.servers.size,
      apps: s.apps.size,
      urls: s.urls.size,
      installers: s.installers.size,
      runs: s.runs.size,
      activeRuns: s.activeRuns.size,
      backups: s.backups.size,
      restorePoints: s.restorePoints.size,
      streams: this.core.streams.open,
    };
  }

  // ---- helpers ----
  private app(id: number): AppRec {
    const app = this.core.state.apps.get(id);
    if (!app) throw new Error(`app ${id} not found`);
    return app;
  }

  private url(id: number): UrlRec {
    const url = this.core.state.urls.get(id);
    if (!url) throw new Error(`url ${id} not found`);
    return url;
  }

  private backup(id: number): BackupRec {
    const backup = this.core.state.backups.get(id);
    if (!backup) throw new Error(`backup ${id} not found`);
    return backup;
  }

  private failedCopy(backup: BackupRec, error: string) {
    return {
      storage: this.core.state.namespace(backup.nsId).storage,
      type: 's3',
      onStorage: false,
      state: VOCABULARY.offsite.failed,
      uploadedAt: null,
      error,
    };
  }

  /** A restore point of a change of `action` (default update) at `at`, still running, stored; callers settle it. */
  private newRestorePoint(
    app: AppRec,
    at: number,
    action: AddRestorePointOptions['action'] = 'update',
    runId: number | null,
  ): RestorePointRec {
    const state = this.core.state;
    const point: RestorePointRec = {
      id: state.nextId('restore_point'),
      appId: app.id,
      nsId: app.nsId,
      at,
      action,
      outcome: 'running',
      runId,
      commits:
        action === 'update'
          ? app.repositories.map((r) => ({ repository: r.repository, before: r.deployedSha, after: r.headSha }))
          : [],
      modules: action === 'update_modules' ? ['sale', 'stock'] : [],
      backupId: state.backupIndex.byApp(app.id)[0]?.id ?? null,
      rollbackOfId: null,
      held: false,
      instantUndo: false,
      keptUntil: null,
    };
    state.restorePoints.set(point.id, point);
    state.restorePointIndex.add(point);
    return point;
  }

  /** A run with stored steps laid out one after another from `createdAt` (capped at now), all done; callers adjust. */
  private newRun(app: AppRec, workflow: WorkflowName, createdAt: number, now: number): RunRec {
    const state = this.core.state;
    const run = runRec({
      id: state.nextId('run'),
      appId: app.id,
      nsId: app.nsId,
      workflow,
      record: app.name,
      recordType: 'app',
      createdAt,
    });
    const steps = this.core.engine.stepsOf(run);
    for (const s of steps) {
      s.startedAt = s.startedAt === null ? null : Math.min(s.startedAt, now);
      s.updatedAt = s.updatedAt === null ? null : Math.min(s.updatedAt, now);
    }
    run.steps = steps;
    run.updatedAt = steps[steps.length - 1]?.updatedAt ?? createdAt;
    state.runs.set(run.id, run);
    state.runIndex.add(run);
    return run;
  }
}

function workflowOf(action: string | undefined): WorkflowName {
  if (action === undefined) return 'app_update';
  const found = (Object.keys(WORKFLOWS) as WorkflowName[]).find((w) => WORKFLOWS[w].action === action);
  if (!found)
    throw new Error(
      `unknown action "${action}"; known: ${Object.values(WORKFLOWS)
        .map((w) => w.action)
        .join(', ')}`,
    );
  return found;
}

function stepIndexOf(names: readonly string[], step: string | number | undefined, fallback: number): number {
  if (step === undefined) return fallback;
  if (typeof step === 'number') return Math.max(0, Math.min(names.length - 1, step));
  const i = names.indexOf(step);
  if (i < 0) throw new Error(`unknown step "${step}"; steps are ${names.join(', ')}`);
  return i;
}

function watcherRec(state: WatcherState, progress: string | null, reason: string | null, startedAt: number) {
  return {
    state,
    progress,
    reason: state === 'waiting' || state === 'completed' ? null : reason,
    startedAt,
    durationMs: null,
    outcome: 'completed' as const,
    outcomeReason: null,
  };
}
