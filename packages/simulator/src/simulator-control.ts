/**
 * The control interface of a running simulator: what every check shares (time, faults, the request
 * log, the service's modes, the runs engine, churn, what is wrong) and, under `checks`, each check's
 * staging operations, one module each (`checks/registry.ts`). Tests call it in-process;
 * out-of-process tests and the standalone command reach it as `POST {baseUrl}/_sim/<method>` (a
 * check's operation: `_sim/checks.<check>.<operation>`) with the admin token.
 */
import { checkStaging, type CheckStaging } from './checks/registry.js';
import { DAY, StageContext } from './checks/stage-context.js';
import { checkListGrading, type ListGrading } from './read-handlers.js';
import type { App, Run, WatcherState } from '../../../src/api/schemas.js';
import type { FaultSpec, FaultTarget } from './fault-injector.js';
import type { ProblemKind, SimProblem } from './problem-finder.js';
import { Prng } from './prng.js';
import type { RateLimitSpec } from './rate-limiter.js';
import { checkMaxLimit } from './request-params.js';
import { AUTO_RETRY_DELAY_MS, leftAsBefore, type FailDirective } from './run-engine.js';
import { addRestorePointRec, runRec, type AppRec, type RunRec, type SimState, type StepRec } from './sim-state.js';
import type { RequestRecord, SimulatorCore } from './simulator-core.js';
import { checkTimeFormat, type TimeFormat } from './time-format.js';
import { PUBLIC_CHECK_PASSED, STEP_FAILURE_REASONS, VOCABULARY, WORKFLOWS, type WorkflowName } from './vocabulary.js';
import { isGone } from './views.js';

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
  private readonly sim: StageContext;
  /**
   * Each check's staging operations (`checks/<check>.ts`): `checks.certificates.expire(urlId, { inDays: 3 })`,
   * `checks.backups.add(appId)`, … (over HTTP: `POST /_sim/checks.certificates.expire`).
   */
  readonly checks: CheckStaging;

  constructor(private readonly core: SimulatorCore) {
    this.sim = new StageContext(core);
    this.checks = checkStaging(this.sim);
  }

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
    const app = this.sim.app(options.appId);
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
    const point = addRestorePointRec(this.core.state, app, run.createdAt, action, run.id);
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

  // ---- apps, servers, service ----
  /**
   * Deletes an app: it leaves `apps.list` (still given with `include_deleted=true`, state deleted)
   * and its URLs leave `urls.list`; its runs and backups stay on record.
   */
  deleteApp(appId: number): App {
    const now = this.core.tick();
    const app = this.sim.app(appId);
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

  /**
   * Gives an app another name, or its primary URL another address, as a service may hold any text
   * there (markup, a `javascript:` URL): what readers of the names must show as text.
   */
  renameApp(appId: number, patch: { name?: string; url?: string }): App {
    const now = this.core.tick();
    const app = this.sim.app(appId);
    if (patch.name !== undefined) app.name = patch.name;
    if (patch.url !== undefined) {
      const primary = app.urlIds.map((id) => this.sim.url(id)).find((u) => u.primary);
      if (!primary) throw new Error(`renameApp: app ${appId} has no primary URL`);
      primary.url = patch.url;
    }
    return this.core.views.app(app, now);
  }

  /** Every change answers writes_disabled while on. */
  setWritesDisabled(on: boolean): { writesDisabled: boolean } {
    this.core.state.writesDisabled = on;
    return { writesDisabled: on };
  }

  /** Every change of this app answers locked while on. */
  setLocked(appId: number, on: boolean): App {
    const now = this.core.tick();
    const app = this.sim.app(appId);
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
        this.checks.backups.add(app.id, { hoursAgo: 0, automated: true });
        const run = this.newRun(app, 'app_backup', now - 3 * 60_000, now);
        this.core.engine.finish(run, now, 'done');
        counts.backups += 1;
        counts.runs += 1;
      } else if (r < 0.85) {
        const failed = r >= 0.75;
        const run = this.newRun(app, 'app_update', now - 4 * 60_000, now);
        // As a real update does: a restore point the run settles (applied, or failed at its check).
        run.effect = {
          kind: 'update',
          restorePointId: addRestorePointRec(this.core.state, app, run.createdAt, 'update', run.id).id,
        };
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
