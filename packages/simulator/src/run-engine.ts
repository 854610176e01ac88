/**
 * Runs that move with simulated time. A run's steps each take a seeded 20–60 s; a backup, restore
 * or upgrade run then waits for its watcher. Nothing ticks in the background: `tick(now)` is called
 * on every request and control call and replays, in order, every transition that became due since
 * the last call, each at its own exact time. So `advance(ms)`, a ManualClock shared with the
 * daemon, and real time all give the same story.
 */
import type { WatcherState } from '../../../src/api/schemas.js';
import { BackupSettling } from './backup-outcome.js';
import { hash32 } from './prng.js';
import {
  runRec,
  type AppRec,
  type BackupRec,
  type RunEffect,
  type RunRec,
  type SimState,
  type StepRec,
  type WatcherRec,
} from './sim-state.js';
import { VOCABULARY, WATCHER_PROGRESS, WORKFLOWS, type WorkflowName } from './vocabulary.js';

const RUN = VOCABULARY.run;
const STEP = VOCABULARY.step;
/** How long a `retrying` run waits before it retries its failed step by itself. */
export const AUTO_RETRY_DELAY_MS = 10 * 60_000;
/** How long restore points keep the database from before the change (instant undo). */
const INSTANT_UNDO_MS = 7 * 86_400_000;

/** A scenario's order that the next matching run started by a change fails at a step. */
export interface FailDirective {
  appId?: number;
  action?: string;
  /** Step name or index; default the last step before any watcher. */
  step?: string | number;
  reason?: string;
  /**
   * The service will retry the failed step by itself (`retrying` true, an automatic retry due in
   * {@link AUTO_RETRY_DELAY_MS}): a failure of that retry takes the next matching directive, so
   * several of these make a run that keeps failing and retrying by itself.
   */
  retrying?: boolean;
}

/** Options of a run started by a change. */
export interface StartRunOptions {
  app: AppRec;
  workflow: WorkflowName;
  now: number;
  effect: RunEffect;
  /** Leave these steps out (quick update: no image build; modules none: no module update). */
  skipSteps?: readonly string[];
  backupRunId?: number | null;
  backupId?: number | null;
}

/** Seeded duration of a step of a run: 20–60 s. */
export function stepDurationMs(seed: number, runId: number, step: number): number {
  return 20_000 + (hash32(seed, runId, step) % 40_001);
}

/** Seeded duration of a watcher: 1–4 min. */
export function watcherDurationMs(seed: number, runId: number): number {
  return 60_000 + (hash32(seed, runId, 997) % 180_001);
}

/** Total time of a seeded run's successful story (steps, then any watcher). */
export function seededRunLengthMs(
  seed: number,
  runId: number,
  workflow: WorkflowName,
  failedStep: number | null,
): number {
  const spec = WORKFLOWS[workflow];
  const last = failedStep ?? spec.steps.length - 1;
  let total = 0;
  for (let i = 0; i <= last; i += 1) total += stepDurationMs(seed, runId, i);
  if (failedStep === null && spec.watcher) total += watcherDurationMs(seed, runId);
  return total;
}

/** Moves runs along simulated time and applies what finished runs do. */
export class RunEngine {
  private readonly failNext: FailDirective[] = [];

  /**
   * How backups end after their run is done, and those waiting to (a mode: `backup-outcome.ts`).
   * Kept by the engine that settles them, not in SimState, which backup-outcome.ts's records come from.
   */
  readonly backupSettling = new BackupSettling();

  constructor(
    private readonly state: SimState,
    private readonly seed: number,
  ) {}

  /** The steps of a run: stored for live runs, derived for seeded history. */
  stepsOf(run: RunRec): StepRec[] {
    if (run.steps) return run.steps;
    const names = WORKFLOWS[run.workflow].steps;
    const steps: StepRec[] = [];
    let t = run.createdAt;
    for (let i = 0; i < names.length; i += 1) {
      const durationMs = stepDurationMs(this.seed, run.id, i);
      const failed = run.seedFailedStep === i;
      const reached = run.seedFailedStep === null || i <= run.seedFailedStep;
      steps.push({
        name: names[i] as string,
        state: !reached ? STEP.pending : failed ? STEP.error : STEP.done,
        startedAt: reached ? t : null,
        updatedAt: reached ? t + durationMs : null,
        reason: failed ? run.seedReason : null,
        durationMs,
      });
      t += durationMs;
    }
    return steps;
  }

  /** The watcher of a run as read: live runs carry it; seeded history derives it. */
  watcherOf(run: RunRec): WatcherRec | null {
    if (run.watcher || run.steps) return run.watcher;
    if (!WORKFLOWS[run.workflow].watcher || run.seedFailedStep !== null || run.state !== RUN.done) return null;
    return {
      state: 'completed',
      progress: null,
      reason: null,
      startedAt: run.updatedAt,
      durationMs: 0,
      outcome: 'completed',
      outcomeReason: null,
    };
  }

  /** Gives a seeded run stored steps, so it can be changed. */
  materialize(run: RunRec): StepRec[] {
    if (!run.steps) {
      const watcher = this.watcherOf(run);
      run.steps = this.stepsOf(run);
      run.watcher = watcher;
    }
    return run.steps;
  }

  /** Queues a failure for the next matching run started by a change or a retry. */
  addFailDirective(directive: FailDirective): void {
    this.failNext.push(directive);
  }

  /** Starts a run for a change on an app: running at once, or queued behind its backup run. */
  start(options: StartRunOptions): RunRec {
    const { app, workflow, now } = options;
    const id = this.state.nextId('run');
    const names = WORKFLOWS[workflow].steps.filter((s) => !options.skipSteps?.includes(s));
    const steps: StepRec[] = names.map((name, i) => ({
      name,
      state: STEP.pending,
      startedAt: null,
      updatedAt: null,
      reason: null,
      durationMs: stepDurationMs(this.seed, id, i),
    }));
    const run = runRec({
      id,
      appId: app.id,
      nsId: app.nsId,
      workflow,
      record: app.name,
      recordType: 'app',
      createdAt: now,
      state: RUN.queued,
      steps,
      backupRunId: options.backupRunId ?? null,
      backupId: options.backupId ?? null,
      effect: options.effect,
    });
    run.failAt = this.takeFailure(run, 0);
    this.state.runs.set(id, run);
    this.state.runIndex.add(run);
    this.state.activeRuns.add(id);
    this.advance(run, now);
    return run;
  }

  /** Restarts a run in error from the step that failed (same run id): runs.retry and the automatic retry. */
  restartFromFailure(run: RunRec, at: number): void {
    const steps = this.materialize(run);
    const failed = steps.find((s) => s.state === STEP.error);
    // The attempt that failed keeps its log: a retry does not rewrite history.
    if (run.watcher && run.watcher.state !== 'waiting' && run.watcher.state !== 'completed') {
      const reason = `watcher ${run.watcher.state}: ${run.watcher.reason ?? 'no reason given'}`;
      (run.pastFailures ??= []).push({ startedAt: null, at: run.updatedAt, step: null, reason });
    } else if (failed) {
      (run.pastFailures ??= []).push({
        startedAt: failed.startedAt,
        at: failed.updatedAt ?? run.updatedAt,
        step: failed.name,
        reason: failed.reason ?? 'failed',
      });
    }
    let from = steps.findIndex((s) => s.state === STEP.error);
    if (from < 0)
      from = Math.max(
        0,
        steps.findIndex((s) => s.state !== STEP.done),
      );
    if (from < 0 || run.watcher) {
      // The watcher failed (or no step is marked): launch the last step again.
      if (run.watcher) from = steps.length - 1;
      run.watcher = null;
    }
    steps.forEach((s, i) => {
      if (i < from) return;
      s.state = i === from ? STEP.running : STEP.pending;
      s.startedAt = i === from ? at : null;
      s.updatedAt = i === from ? at : null;
      s.reason = null;
    });
    run.state = RUN.running;
    run.retrying = false;
    run.autoRetryAt = null;
    run.updatedAt = at;
    run.failAt = this.takeFailure(run, from);
    if (run.effect.kind === 'backup') this.setBackupState(run.effect.backupId, VOCABULARY.backup.running);
    this.state.activeRuns.add(run.id);
  }

  /** Replays every transition due up to `now`, oldest run first (a backup run before the update waiting for it). */
  tick(now: number): void {
    this.backupSettling.tick(now, (id) => {
      const backup = this.state.backups.get(id);
      return backup && { backup, storage: this.state.namespace(backup.nsId).storage };
    });
    if (this.state.activeRuns.size === 0) return;
    const ids = [...this.state.activeRuns].sort((a, b) => a - b);
    for (const id of ids) {
      const run = this.state.runs.get(id);
      if (run) this.advance(run, now);
    }
  }

  /** Ends a run now, as a scenario says: done (with its effects) or error. */
  finish(run: RunRec, at: number, outcome: 'done' | 'error', reason: string | null = null): void {
    const steps = this.materialize(run);
    if (outcome === 'done') {
      for (const s of steps) {
        if (s.state !== STEP.done) {
          s.state = STEP.done;
          s.startedAt ??= at;
          s.updatedAt = at;
          s.reason = null;
        }
      }
    } else {
      const current =
        steps.find((s) => s.state === STEP.running) ??
        steps.find((s) => s.state !== STEP.done) ??
        steps[steps.length - 1];
      if (current && !run.watcher) {
        current.state = STEP.error;
        current.startedAt ??= at;
        current.updatedAt = at;
        current.reason = reason ?? 'failed';
      }
    }
    this.end(run, at, outcome);
  }

  private advance(run: RunRec, now: number): void {
    const steps = run.steps;
    if (!steps) return;
    for (;;) {
      if (run.state === RUN.queued) {
        let start = run.createdAt;
        if (run.backupRunId !== null) {
          const backupRun = this.state.runs.get(run.backupRunId);
          if (backupRun && this.isActive(backupRun)) return;
          if (backupRun && backupRun.state === RUN.error) {
            const first = steps[0];
            if (first)
              Object.assign(first, {
                state: STEP.error,
                startedAt: backupRun.updatedAt,
                updatedAt: backupRun.updatedAt,
                reason: `backup run ${backupRun.id} failed`,
              });
            this.end(run, Math.max(run.createdAt, backupRun.updatedAt), RUN.error);
            return;
          }
          if (backupRun) start = Math.max(start, backupRun.updatedAt);
        }
        if (start > now) return;
        run.state = RUN.running;
        this.startStep(run, 0, start);
        continue;
      }
      if (run.state === RUN.running) {
        const i = steps.findIndex((s) => s.state === STEP.running);
        if (i < 0) {
          if (!this.advanceWatcher(run, now)) return;
          continue;
        }
        const step = steps[i] as StepRec;
        const end = (step.startedAt ?? run.updatedAt) + step.durationMs;
        if (end > now) return;
        if (run.failAt && run.failAt.step <= i) {
          const { reason, retrying } = run.failAt;
          Object.assign(step, { state: STEP.error, updatedAt: end, reason });
          run.failAt = null;
          this.end(run, end, RUN.error);
          if (retrying) {
            // In error, and the service will retry the failed step by itself (reference §3.1).
            run.retrying = true;
            run.autoRetryAt = end + AUTO_RETRY_DELAY_MS;
            this.state.activeRuns.add(run.id);
            continue;
          }
          return;
        }
        Object.assign(step, { state: STEP.done, updatedAt: end });
        run.updatedAt = end;
        if (i + 1 < steps.length) {
          this.startStep(run, i + 1, end);
        } else if (WORKFLOWS[run.workflow].watcher) {
          run.watcher = {
            state: 'waiting',
            progress: WATCHER_PROGRESS[0],
            reason: null,
            startedAt: end,
            durationMs: watcherDurationMs(this.seed, run.id),
            outcome: 'completed',
            outcomeReason: null,
          };
        } else {
          this.end(run, end, RUN.done);
          return;
        }
        continue;
      }
      if (run.state === RUN.error && run.retrying && run.autoRetryAt !== null) {
        if (run.autoRetryAt > now) return;
        this.restartFromFailure(run, run.autoRetryAt);
        continue;
      }
      this.state.activeRuns.delete(run.id);
      return;
    }
  }

  /** Moves a waiting watcher on; true when it reported (the run ended). */
  private advanceWatcher(run: RunRec, now: number): boolean {
    const w = run.watcher;
    if (!w || w.state !== 'waiting') {
      // Steps done and nothing to wait for: the run is over.
      this.end(run, run.updatedAt, w && w.state !== 'completed' ? RUN.error : RUN.done);
      return false;
    }
    if (w.durationMs === null) return false;
    const end = w.startedAt + w.durationMs;
    if (end > now) {
      const fraction = (now - w.startedAt) / Math.max(1, w.durationMs);
      w.progress =
        WATCHER_PROGRESS[Math.min(WATCHER_PROGRESS.length - 1, Math.floor(fraction * WATCHER_PROGRESS.length))] ?? null;
      return false;
    }
    this.reportWatcher(run, w.outcome, w.outcomeReason, end);
    return true;
  }

  /** The watcher reports: the run ends done (completed) or in error (failed, timeout, stopped). */
  reportWatcher(run: RunRec, state: Exclude<WatcherState, 'waiting'>, reason: string | null, at: number): void {
    const w = run.watcher;
    if (!w) return;
    Object.assign(w, { state, progress: null, reason: state === 'completed' ? null : (reason ?? `watcher ${state}`) });
    this.end(run, at, state === 'completed' ? RUN.done : RUN.error);
  }

  private startStep(run: RunRec, i: number, at: number): void {
    const step = run.steps?.[i];
    if (!step) return;
    Object.assign(step, { state: STEP.running, startedAt: at, updatedAt: at, reason: null });
    run.updatedAt = at;
  }

  private isActive(run: RunRec): boolean {
    return run.state === RUN.queued || run.state === RUN.running || (run.state === RUN.error && run.retrying);
  }

  /** Ends a run and applies its effect (done) or marks what it was making as failed (error). */
  private end(run: RunRec, at: number, state: string): void {
    run.state = state;
    run.updatedAt = Math.max(run.updatedAt, at);
    run.retrying = false;
    run.autoRetryAt = null;
    run.failAt = null;
    this.state.activeRuns.delete(run.id);
    const app = run.appId === null ? undefined : this.state.apps.get(run.appId);
    const ok = state === RUN.done;
    const effect = run.effect;
    switch (effect.kind) {
      case 'backup':
        this.setBackupState(effect.backupId, ok ? VOCABULARY.backup.done : VOCABULARY.backup.failed, at);
        break;
      case 'maintenance':
        if (ok && app) app.maintenance = effect.on;
        break;
      case 'restart':
        if (ok && app) app.state = VOCABULARY.app.running;
        break;
      case 'deploy':
        if (ok && app) {
          app.state = VOCABULARY.app.running;
          app.deployedAt = at;
        }
        break;
      case 'update': {
        if (ok && app) {
          app.updatedAt = at;
          for (const repo of app.repositories) {
            repo.deployedSha = repo.headSha;
            repo.checkedAt = at;
          }
        }
        const point = effect.restorePointId === null ? undefined : this.state.restorePoints.get(effect.restorePointId);
        if (point) {
          const failedAt = run.steps?.findIndex((s) => s.state === STEP.error) ?? -1;
          point.outcome = ok
            ? 'applied'
            : leftAsBefore(run.workflow, failedAt < 0 ? null : failedAt)
              ? 'kept'
              : 'failed';
          point.instantUndo = ok;
          point.keptUntil = ok ? at + INSTANT_UNDO_MS : null;
        }
        break;
      }
      case 'none':
        break;
    }
    if (ok && app) app.updatedAt = Math.max(app.updatedAt ?? 0, at);
  }

  private setBackupState(backupId: number, state: string, at?: number): void {
    const backup: BackupRec | undefined = this.state.backups.get(backupId);
    if (!backup) return;
    backup.state = state;
    if (state === VOCABULARY.backup.done && at !== undefined) {
      // Verified and copied off-site now or later, as the backup outcome mode says.
      this.backupSettling.done(backup, this.state.namespace(backup.nsId).storage, at);
    } else if (state === VOCABULARY.backup.running) {
      backup.offsite = [];
    }
  }

  /** Takes the first fail directive matching the run, as a step index at or after `from`. */
  private takeFailure(run: RunRec, from: number): RunRec['failAt'] {
    const i = this.failNext.findIndex(
      (d) => (d.appId === undefined || d.appId === run.appId) && (d.action === undefined || d.action === run.action),
    );
    if (i < 0) return null;
    const directive = this.failNext[i] as FailDirective;
    this.failNext.splice(i, 1);
    const steps = run.steps ?? [];
    let step = steps.length - 1;
    if (typeof directive.step === 'number') step = directive.step;
    else if (typeof directive.step === 'string') {
      const named = steps.findIndex((s) => s.name === directive.step);
      if (named >= 0) step = named;
    }
    step = Math.min(Math.max(step, from), steps.length - 1);
    return {
      step,
      reason: directive.reason ?? `step ${steps[step]?.name ?? step} failed`,
      retrying: directive.retrying === true,
    };
  }
}

/** Starts a backup of an app: a backup record (running) and the run that makes it. */
export function startBackupRun(
  state: SimState,
  engine: RunEngine,
  app: AppRec,
  format: 'zip' | 'dump',
  now: number,
  automated = false,
): { run: RunRec; backup: BackupRec } {
  const newest = state.backupIndex.byApp(app.id)[0];
  const backup: BackupRec = {
    id: state.nextId('backup'),
    appId: app.id,
    nsId: app.nsId,
    takenAt: now,
    format,
    sizeMb: newest ? newest.sizeMb : 512,
    automated,
    state: VOCABULARY.backup.running,
    verified: false,
    offsite: [],
  };
  state.backups.set(backup.id, backup);
  state.backupIndex.add(backup);
  const run = engine.start({
    app,
    workflow: 'app_backup',
    now,
    effect: { kind: 'backup', backupId: backup.id },
    backupId: backup.id,
  });
  return { run, backup };
}

/**
 * Whether an update that failed at step `failedStep` left the app as it was (restore point `kept`):
 * it failed before its modules were migrated. Failed at the migration or after it, the app may be
 * half-updated (`failed`).
 */
export function leftAsBefore(workflow: WorkflowName, failedStep: number | null): boolean {
  const migration = (WORKFLOWS[workflow].steps as readonly string[]).indexOf('update_modules');
  return failedStep === null || migration < 0 || failedStep < migration;
}
