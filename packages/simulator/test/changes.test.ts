import { describe, expect, it } from 'vitest';
import { changeResultSchema, runSchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import type { AppRec } from '../src/sim-state.js';
import { apiGet, apiPost, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({
  apps: 80,
  seed: 3,
  clock,
  tokens: [
    { token: 'dev-only', namespaces: '*', permissions: '*', changeEnvironments: ['development'] },
    {
      token: 'dev-only-unheld',
      namespaces: '*',
      permissions: '*',
      changeEnvironments: ['development'],
      changeRefusal: 'function_not_allowed',
    },
  ],
});
const state = sim.control.state;
const busy = () => new Set([...state.activeRuns].map((id) => state.runs.get(id)!.appId));
/** Apps to change, each used by one test only, so tests do not see each other's runs. */
const pool = [...state.apps.values()].filter((a) => a.state === 'running' && !a.upgrade && !busy().has(a.id));
const take = (envType: AppRec['envType']) => {
  const i = pool.findIndex((a) => a.envType === envType);
  if (i < 0) throw new Error(`no free ${envType} app left in the pool`);
  return pool.splice(i, 1)[0]!;
};
const getRun = async (id: number) => runSchema.parse((await apiGet(sim, `/runs/${id}`)).body.data);
/** Advances simulated time in 10 s steps until the run satisfies `done`, at most `maxMs`. */
const advanceUntil = async (
  runId: number,
  done: (run: ReturnType<typeof runSchema.parse>) => boolean,
  maxMs = 30 * 60_000,
) => {
  for (let t = 0; t <= maxMs; t += 10_000) {
    const run = await getRun(runId);
    if (done(run)) return run;
    sim.control.advance(10_000);
  }
  throw new Error(`run ${runId} did not get there in ${maxMs} ms`);
};

describe('idempotency', () => {
  it('refuses a change without Idempotency-Key', async () => {
    const res = await apiPost(sim, `/apps/${take('development').id}/restart`, {}, { key: null });
    expect(res.status).toBe(428);
    expect(res.body.error.code).toBe('idempotency_key_required');
  });

  it('answers the same key and body with the stored answer, and starts one run', async () => {
    const app = take('development');
    const before = state.runs.size;
    const first = await apiPost(sim, `/apps/${app.id}/backup`, { format: 'dump' }, { key: 'k-same' });
    const again = await apiPost(sim, `/apps/${app.id}/backup`, { format: 'dump' }, { key: 'k-same' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(state.runs.size).toBe(before + 1);
  });

  it('replays a stored refusal with its status', async () => {
    const app = take('development');
    const first = await apiPost(sim, `/apps/${app.id}/maintenance`, {}, { key: 'k-refused' });
    const again = await apiPost(sim, `/apps/${app.id}/maintenance`, {}, { key: 'k-refused' });
    expect(first.status).toBe(400);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(first.body);
  });

  it('refuses the same key with a different body', async () => {
    const app = take('development');
    await apiPost(sim, `/apps/${app.id}/backup`, { format: 'zip' }, { key: 'k-reused' });
    const res = await apiPost(sim, `/apps/${app.id}/backup`, { format: 'dump' }, { key: 'k-reused' });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
  });

  it('answers request_in_progress while the first request with the key hangs, and handles the key again once its client gives up', async () => {
    const app = take('development');
    sim.control.resetRequests();
    sim.control.setFault('apps.restart', { hang: true, times: 1 });
    const abort = new AbortController();
    const hanging = fetch(`${sim.baseUrl}/api/v1/apps/${app.id}/restart`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sim.adminToken}`,
        'content-type': 'application/json',
        'idempotency-key': 'k-flight',
      },
      body: '{}',
      signal: abort.signal,
    }).catch((err: unknown) => err);
    // Wait until the simulator has the first request (it logs a hanging request with status 0).
    while (!sim.control.requests().some((r) => r.idempotencyKey === 'k-flight'))
      await new Promise((r) => setTimeout(r, 5));
    const res = await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-flight' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('request_in_progress');
    abort.abort();
    expect(await hanging).toBeInstanceOf(Error);
    // The hung change was never made: once the simulator sees the connection close (a moment
    // later), the same key is handled, not refused as in progress forever.
    let retry = await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-flight' });
    for (let i = 0; i < 200 && retry.status === 409; i++) {
      await new Promise((r) => setTimeout(r, 10));
      retry = await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-flight' });
    }
    expect(retry.status).toBe(200);
  });
});

describe('body checks', () => {
  const app = take('development');
  it.each([
    ['maintenance without on', 'maintenance', {}, 'missing_parameter'],
    ['update_modules without modules', 'update-modules', {}, 'missing_parameter'],
    ['an unknown body parameter', 'backup', { colour: 'red' }, 'unknown_parameter'],
    ['a wrong type', 'maintenance', { on: 'yes' }, 'invalid_parameter'],
    ['a bad enum value', 'backup', { format: 'tar' }, 'invalid_parameter'],
    ['bad module names', 'update-modules', { modules: 'sale,DROP TABLE' }, 'invalid_parameter'],
    ['modules none without quick', 'update', { modules: 'none' }, 'invalid_parameter'],
  ])('refuses %s', async (_what, action, body, code) => {
    const res = await apiPost(sim, `/apps/${app.id}/${action}`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
  });

  it.each([
    ['invalid JSON', 'application/json', '{"on": tru'],
    ['a body that is not JSON', 'text/plain', 'on=true'],
    ['a JSON array', 'application/json', '[true]'],
  ])('refuses %s with invalid_request', async (_what, type, body) => {
    const res = await fetch(`${sim.baseUrl}/api/v1/apps/${app.id}/maintenance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.adminToken}`, 'content-type': type, 'idempotency-key': `k-${body}` },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });
});

describe('refusals of the app state', () => {
  it('answers access_denied for an environment the token may not change', async () => {
    const res = await apiPost(sim, `/apps/${take('production').id}/restart`, {}, { token: 'dev-only' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('access_denied');
    expect((await apiPost(sim, `/apps/${take('development').id}/restart`, {}, { token: 'dev-only' })).status).toBe(200);
  });

  it('answers function_not_allowed there for a token whose functions are held per environment', async () => {
    const res = await apiPost(sim, `/apps/${take('production').id}/restart`, {}, { token: 'dev-only-unheld' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('function_not_allowed');
    const dev = take('development');
    expect((await apiPost(sim, `/apps/${dev.id}/restart`, {}, { token: 'dev-only-unheld' })).status).toBe(200);
  });

  it('answers writes_disabled while writes are off', async () => {
    sim.control.setWritesDisabled(true);
    const res = await apiPost(sim, `/apps/${take('development').id}/restart`, {});
    sim.control.setWritesDisabled(false);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('writes_disabled');
  });

  it('answers locked for a locked app', async () => {
    const app = take('development');
    sim.control.setLocked(app.id, true);
    const res = await apiPost(sim, `/apps/${app.id}/backup`, {});
    expect(res.status).toBe(423);
    expect(res.body.error.code).toBe('locked');
  });

  it('answers upgrade_standby for an app whose upgrade is in standby', async () => {
    const app = [...state.apps.values()].find((a) => a.upgrade?.state === 'standby')!;
    const res = await apiPost(sim, `/apps/${app.id}/update`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('upgrade_standby');
  });

  it('answers not_deployed for an app not deployed', async () => {
    const app = take('staging');
    app.deployedAt = null; // test-only: the seed has few such apps
    const res = await apiPost(sim, `/apps/${app.id}/update`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('not_deployed');
  });

  it('answers not_found for an unknown app', async () => {
    expect((await apiPost(sim, '/apps/999999/restart', {})).body.error.code).toBe('not_found');
  });
});

describe('runs over simulated time', () => {
  it('moves a restart through its steps to done', async () => {
    const app = take('development');
    const res = await apiPost(sim, `/apps/${app.id}/restart`, {});
    const result = changeResultSchema.parse(res.body.data);
    expect(result).toMatchObject({ state: 'started', app_id: app.id, backup_run_id: null });
    const run = await getRun(result.run_id!);
    expect(run.state).toBe('running');
    expect(run.steps.map((s) => s.state)).toEqual(['running', 'pending']);
    sim.control.advance(60_001);
    expect((await getRun(run.id)).steps[0]!.state).toBe('done');
    sim.control.advance(60_000);
    const done = await getRun(run.id);
    expect(done.state).toBe('done');
    expect(done.steps.every((s) => s.state === 'done')).toBe(true);
  });

  it('joins a running change of the same kind and refuses another kind', async () => {
    const app = take('development');
    const first = (await apiPost(sim, `/apps/${app.id}/restart`, {})).body.data;
    const same = await apiPost(sim, `/apps/${app.id}/restart`, {});
    expect(same.body.data).toMatchObject({ state: 'already_running', run_id: first.run_id });
    const other = await apiPost(sim, `/apps/${app.id}/update`, {});
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('in_progress');
    sim.control.advance(5 * 60_000);
  });

  it('keeps a backup run running until its watcher reports, then makes the backup', async () => {
    const app = take('staging');
    const result = (await apiPost(sim, `/apps/${app.id}/backup`, { format: 'zip' })).body.data;
    expect(result.backup_id).toEqual(expect.any(Number));
    const waiting = await advanceUntil(result.run_id, (r) => r.watcher !== null);
    expect(waiting.state).toBe('running');
    expect(waiting.steps.every((s) => s.state === 'done')).toBe(true);
    expect(waiting.watcher).toMatchObject({ state: 'waiting', progress: expect.any(String) });
    const again = await apiPost(sim, `/apps/${app.id}/backup`, {});
    expect(again.body.data).toMatchObject({ state: 'already_running', run_id: result.run_id });
    const done = await advanceUntil(result.run_id, (r) => r.state !== 'running');
    expect(done.state).toBe('done');
    expect(done.watcher?.state).toBe('completed');
    const backup = (await apiGet(sim, `/backups/${result.backup_id}`)).body.data;
    expect(backup).toMatchObject({ state: 'done', verified: true, app_id: app.id });
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.last_backup_at).toBe(backup.taken_at);
  });

  it('backs up first in production; the update waits for that backup', async () => {
    const app = take('production');
    const result = changeResultSchema.parse((await apiPost(sim, `/apps/${app.id}/update`, {})).body.data);
    expect(result.backup_run_id).toEqual(expect.any(Number));
    expect(result.backup_id).toEqual(expect.any(Number));
    expect((await getRun(result.run_id!)).state).toBe('queued');
    const backupRun = await advanceUntil(result.backup_run_id!, (r) => r.state === 'done');
    const update = await advanceUntil(result.run_id!, (r) => r.state === 'done');
    expect(Date.parse(update.steps[0]!.started_at!)).toBeGreaterThanOrEqual(Date.parse(backupRun.updated_at!));
    const points = (await apiGet(sim, `/apps/${app.id}/restore-points?limit=1`)).body.data.items;
    expect(points[0]).toMatchObject({ run_id: update.id, outcome: 'applied', backup_id: result.backup_id });
  });

  it('does not back up first outside production unless asked', async () => {
    const dev = await apiPost(sim, `/apps/${take('development').id}/update`, { quick: true, modules: 'none' });
    expect(dev.body.data.backup_run_id).toBeNull();
    const run = await getRun(dev.body.data.run_id);
    expect(run.steps.map((s) => s.name)).toEqual(['pull_code', 'restart', 'check']);
    const asked = await apiPost(sim, `/apps/${take('development').id}/update-modules`, {
      modules: 'sale,stock',
      backup: true,
    });
    expect(asked.body.data.backup_run_id).toEqual(expect.any(Number));
  });

  it('restarts a stopped app: running again when its run is done', async () => {
    const app = take('development');
    sim.control.checks.app_state.set(app.id, 'stopped');
    const result = (await apiPost(sim, `/apps/${app.id}/restart`, {})).body.data;
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.state).toBe('stopped');
    await advanceUntil(result.run_id, (r) => r.state === 'done');
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.state).toBe('running');
  });

  it('takes an app out of maintenance (on: false) when its run is done', async () => {
    const app = take('development');
    sim.control.checks.maintenance.set(app.id, true);
    const result = (await apiPost(sim, `/apps/${app.id}/maintenance`, { on: false })).body.data;
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.maintenance).toBe(true);
    await advanceUntil(result.run_id, (r) => r.state === 'done');
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.maintenance).toBe(false);
  });

  it.each([
    ['verified', { verified: true, offsite: [{ on_storage: true, state: 'uploaded', error: null }] }],
    ['unverified', { verified: false, offsite: [{ on_storage: true, state: 'uploaded', error: null }] }],
    [
      'offsite_failed',
      {
        verified: true,
        offsite: [{ on_storage: false, state: 'failed', error: 'upload failed: storage quota exceeded' }],
      },
    ],
  ] as const)(
    'a backup ends %s, five minutes after its run in that mode (uploading meanwhile)',
    async (result, end) => {
      sim.control.checks.backups.setOutcome({ result, settleMs: 5 * 60_000 });
      try {
        const app = take('staging');
        const change = (await apiPost(sim, `/apps/${app.id}/backup`, {})).body.data;
        await advanceUntil(change.run_id, (r) => r.state === 'done');
        const meanwhile = (await apiGet(sim, `/backups/${change.backup_id}`)).body.data;
        expect(meanwhile).toMatchObject({
          state: 'done',
          verified: false,
          offsite: [{ on_storage: false, state: 'uploading', uploaded_at: null, error: null }],
        });
        sim.control.advance(5 * 60_000);
        expect((await apiGet(sim, `/backups/${change.backup_id}`)).body.data).toMatchObject({ state: 'done', ...end });
      } finally {
        sim.control.checks.backups.setOutcome({});
      }
    },
  );

  it('applies maintenance when its run is done', async () => {
    const app = take('development');
    const result = (await apiPost(sim, `/apps/${app.id}/maintenance`, { on: true })).body.data;
    await advanceUntil(result.run_id, (r) => r.state === 'done');
    expect((await apiGet(sim, `/apps/${app.id}`)).body.data.maintenance).toBe(true);
  });
});

describe('runs.retry', () => {
  it('restarts a failed run from the failed step, same run id', async () => {
    const app = take('development');
    sim.control.failNextRun({ appId: app.id, step: 'check', reason: 'health check timed out after 120 s' });
    const result = (await apiPost(sim, `/apps/${app.id}/restart`, {})).body.data;
    const failed = await advanceUntil(result.run_id, (r) => r.state === 'error');
    expect(failed.retrying).toBe(false);
    expect(failed.steps.map((s) => s.state)).toEqual(['done', 'error']);
    expect(failed.steps[1]!.reason).toBe('health check timed out after 120 s');
    const firstStepEnd = failed.steps[0]!.updated_at;

    const retry = await apiPost(sim, `/runs/${failed.id}/retry`, {});
    expect(retry.status).toBe(200);
    expect(retry.body.data).toMatchObject({ state: 'started', run_id: failed.id, app_id: app.id });
    const running = await getRun(failed.id);
    expect(running.state).toBe('running');
    expect(running.steps.map((s) => s.state)).toEqual(['done', 'running']);
    expect(running.steps[0]!.updated_at).toBe(firstStepEnd);
    const done = await advanceUntil(failed.id, (r) => r.state === 'done');
    expect(done.steps.every((s) => s.state === 'done')).toBe(true);
  });

  it('answers already_running with the run for a run retried already and under way again', async () => {
    const app = take('development');
    const run = sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', failedStep: 'check' });
    expect((await apiPost(sim, `/runs/${run.id}/retry`, {})).body.data.state).toBe('started');
    const again = await apiPost(sim, `/runs/${run.id}/retry`, {});
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ state: 'already_running', run_id: run.id, app_id: app.id });
    expect((await getRun(run.id)).state).toBe('running');
  });

  it('answers not_retryable for a run not in error', async () => {
    const done = state.runIndex.all.find((r) => r.state === 'done' && r.appId !== null)!;
    const res = await apiPost(sim, `/runs/${done.id}/retry`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('not_retryable');
  });

  it('answers retry_coming for a retrying run, and retries it with now: true', async () => {
    const app = take('development');
    const run = sim.control.addRun({
      appId: app.id,
      action: 'update',
      state: 'error',
      failedStep: 'update_modules',
      retrying: true,
    });
    const res = await apiPost(sim, `/runs/${run.id}/retry`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('retry_coming');
    const now = await apiPost(sim, `/runs/${run.id}/retry`, { now: true });
    expect(now.body.data).toMatchObject({ state: 'started', run_id: run.id });
    expect((await getRun(run.id)).steps.map((s) => s.state)).toEqual(['done', 'done', 'running', 'pending', 'pending']);
  });

  it('retries a retrying run by itself after the delay', async () => {
    const app = take('development');
    const run = sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', retrying: true });
    expect(run).toMatchObject({ state: 'error', retrying: true });
    const done = await advanceUntil(run.id, (r) => r.state === 'done', 20 * 60_000);
    expect(done.retrying).toBe(false);
  });

  it('a failure the service retries by itself: back to retrying after each failed automatic retry', async () => {
    const app = take('development');
    const directive = { appId: app.id, action: 'restart', reason: 'port still bound', retrying: true };
    sim.control.failNextRun(directive);
    sim.control.failNextRun(directive);
    const run = sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', retrying: true });
    const failedAt: (string | null)[] = [];
    for (let retry = 0; retry < 2; retry++) {
      await advanceUntil(run.id, (r) => r.state === 'running', 20 * 60_000);
      const again = await advanceUntil(run.id, (r) => r.state === 'error', 5 * 60_000);
      expect(again).toMatchObject({ retrying: true });
      expect(again.steps.at(-1)).toMatchObject({ state: 'error', reason: 'port still bound' });
      failedAt.push(again.updated_at);
    }
    // Each retry moves updated_at: it says when the run last failed, not when it first did.
    expect(new Set(failedAt).size).toBe(2);
    const done = await advanceUntil(run.id, (r) => r.state === 'done', 20 * 60_000);
    expect(done.retrying).toBe(false);
  });
});
