/**
 * The change functions of the API. Each checks, in this order: writes disabled, the record
 * (not_found outside the token's namespaces), the token's right to change that environment
 * (access_denied, or function_not_allowed for a token so made: `changeRefusal`), the app's lock,
 * then the app's own state (not_deployed, upgrade_standby) and runs already under way.
 *
 * Runs under way: a change of the same kind as an active run of the app joins it and answers
 * `already_running` with that run (apps.backup while a backup of the app runs; apps.update while
 * an update runs; runs.retry of a run already running again; …); a change of another kind answers
 * `in_progress` (409), since the platform queues one change per app at a time.
 */
import type { ChangeResult, EnvironmentType } from '../../../src/api/schemas.js';
import { findInScope, type CallContext } from './call-context.js';
import { startBackupRun, type RunEngine } from './run-engine.js';
import { SimError } from './sim-error.js';
import type { AppRec, RunRec, SimState } from './sim-state.js';
import { VOCABULARY, type WorkflowName } from './vocabulary.js';
import { isGone } from './views.js';

/** The change functions, by catalogue name. */
export type ChangeName =
  'apps.backup' | 'apps.maintenance' | 'apps.restart' | 'apps.update' | 'apps.update_modules' | 'runs.retry';

const MODULE_NAME = /^[a-z0-9_]+$/;

/** Applies changes to the simulator's state and starts their runs. */
export class ChangeHandlers {
  constructor(
    private readonly state: SimState,
    private readonly engine: RunEngine,
  ) {}

  /** Applies one change function. */
  handle(name: ChangeName, ctx: CallContext): ChangeResult {
    if (this.state.writesDisabled)
      throw new SimError('writes_disabled', 'changes are disabled on this service for now');
    if (name === 'runs.retry') return this.retry(ctx);
    const app = findInScope(this.state.apps, ctx.id, ctx.grant, 'app');
    mayChange(ctx, app.envType, 'apps');
    if (app.locked) throw new SimError('locked', `app ${app.id} is locked`);
    const body = ctx.body;
    switch (name) {
      case 'apps.backup': {
        const joined = this.join(app, 'app_backup');
        if (joined) return joined;
        const { run, backup } = startBackupRun(
          this.state,
          this.engine,
          app,
          (body.format as 'zip' | 'dump' | undefined) ?? 'zip',
          ctx.now,
        );
        return result(run, backup.id, null);
      }
      case 'apps.maintenance': {
        this.mustBeDeployed(app);
        this.notInStandby(app);
        const joined = this.join(app, 'app_maintenance');
        if (joined) return joined;
        const run = this.engine.start({
          app,
          workflow: 'app_maintenance',
          now: ctx.now,
          effect: { kind: 'maintenance', on: body.on as boolean },
        });
        return result(run, null, null);
      }
      case 'apps.restart': {
        this.notInStandby(app);
        const joined = this.join(app, 'app_restart');
        if (joined) return joined;
        return result(
          this.engine.start({ app, workflow: 'app_restart', now: ctx.now, effect: { kind: 'restart' } }),
          null,
          null,
        );
      }
      case 'apps.update':
      case 'apps.update_modules': {
        this.mustBeDeployed(app);
        this.notInStandby(app);
        const workflow: WorkflowName = name === 'apps.update' ? 'app_update' : 'app_update_modules';
        const modules = name === 'apps.update_modules' ? parseModules(body.modules as string) : [];
        if (name === 'apps.update' && body.modules === 'none' && body.quick !== true) {
          throw new SimError('invalid_parameter', 'parameter "modules" can be none only with quick: true');
        }
        const joined = this.join(app, workflow);
        if (joined) return joined;
        const backupFirst = (body.backup as boolean | undefined) ?? app.envType === 'production';
        const backup = backupFirst
          ? startBackupRun(
              this.state,
              this.engine,
              app,
              (body.backup_format as 'zip' | 'dump' | undefined) ?? 'zip',
              ctx.now,
            )
          : null;
        const pointId = this.state.nextId('restore_point');
        const skipSteps = [
          ...(body.quick === true ? ['build_image'] : []),
          ...(body.modules === 'none' ? ['update_modules'] : []),
        ];
        const run = this.engine.start({
          app,
          workflow,
          now: ctx.now,
          effect: { kind: 'update', restorePointId: pointId },
          skipSteps,
          backupRunId: backup?.run.id ?? null,
          backupId: backup?.backup.id ?? null,
        });
        const point = {
          id: pointId,
          appId: app.id,
          nsId: app.nsId,
          at: ctx.now,
          action: run.action,
          outcome: 'running' as const,
          runId: run.id,
          commits:
            name === 'apps.update'
              ? app.repositories.map((r) => ({ repository: r.repository, before: r.deployedSha, after: r.headSha }))
              : [],
          modules,
          backupId: backup?.backup.id ?? null,
          rollbackOfId: null,
          held: false,
          instantUndo: false,
          keptUntil: null,
        };
        this.state.restorePoints.set(point.id, point);
        this.state.restorePointIndex.add(point);
        return result(run, backup?.backup.id ?? null, backup?.run.id ?? null);
      }
    }
  }

  private retry(ctx: CallContext): ChangeResult {
    const run = findInScope(this.state.runs, ctx.id, ctx.grant, 'run');
    const app = run.appId === null ? undefined : this.state.apps.get(run.appId);
    mayChange(ctx, app ? app.envType : null, 'records');
    if (app?.locked) throw new SimError('locked', `app ${app.id} is locked`);
    // Retried already (by hand, or by the service itself): the run is under way again (§3.3).
    if (run.state === VOCABULARY.run.queued || run.state === VOCABULARY.run.running)
      return { ...result(run, run.backupId, run.backupRunId), state: 'already_running' };
    if (run.state !== VOCABULARY.run.error)
      throw new SimError(
        'not_retryable',
        `run ${run.id} is ${run.state}, not in error; only a failed run can be retried`,
      );
    if (run.retrying && ctx.body.now !== true) {
      const minutes = run.autoRetryAt === null ? null : Math.max(0, Math.ceil((run.autoRetryAt - ctx.now) / 60_000));
      throw new SimError(
        'retry_coming',
        `run ${run.id} retries by itself${minutes === null ? ' soon' : ` in ${minutes} min`}; send now: true to retry at once`,
      );
    }
    this.engine.restartFromFailure(run, ctx.now);
    return result(run, run.backupId, run.backupRunId);
  }

  /** A run of the same workflow under way is joined (already_running); another kind of run refuses (in_progress). */
  private join(app: AppRec, workflow: WorkflowName): ChangeResult | null {
    const active = [...this.state.activeRuns]
      .map((id) => this.state.runs.get(id))
      .filter((r): r is RunRec => r !== undefined && r.appId === app.id);
    const same = active.find((r) => r.workflow === workflow);
    if (same) return { ...result(same, same.backupId, same.backupRunId), state: 'already_running' };
    // A backup run taken first for an update belongs to that update: the update is what is under way.
    const other = active.find((r) => r.workflow !== workflow);
    if (other)
      throw new SimError(
        'in_progress',
        `app ${app.id} has a ${other.action} run under way (run ${other.id}); try again when it is over`,
      );
    return null;
  }

  private mustBeDeployed(app: AppRec): void {
    if (app.deployedAt === null || isGone(app.state))
      throw new SimError('not_deployed', `app ${app.id} is not deployed (state ${app.state})`);
  }

  private notInStandby(app: AppRec): void {
    if (app.upgrade?.state === VOCABULARY.upgrade.standby)
      throw new SimError(
        'upgrade_standby',
        `app ${app.id} has a version upgrade in standby; finish or cancel it first`,
      );
  }
}

/** Refuses a change in an environment the token may not change, with the token's refusal code (§5.4-5). */
function mayChange(ctx: CallContext, environment: EnvironmentType | null, what: 'apps' | 'records'): void {
  if (!ctx.grant.mayChange(environment))
    throw new SimError(ctx.grant.changeRefusal, `this token may not change ${environment ?? 'unassigned'} ${what}`);
}

function result(run: RunRec, backupId: number | null, backupRunId: number | null): ChangeResult {
  return { state: 'started', run_id: run.id, app_id: run.appId, backup_id: backupId, backup_run_id: backupRunId };
}

function parseModules(raw: string): string[] {
  const names = raw
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  const bad = names.find((m) => !MODULE_NAME.test(m));
  if (names.length === 0 || bad !== undefined) {
    throw new SimError(
      'invalid_parameter',
      `parameter "modules" must be comma-separated module names (a-z, 0-9, _)${bad ? `; "${bad}" is not one` : ''}`,
    );
  }
  return names;
}
