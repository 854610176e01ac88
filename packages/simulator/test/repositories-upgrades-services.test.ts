/**
 * The situations the branches, upgrades, restore_points and installers checks look for, as the
 * simulator makes them: through its control interface (in-process and over HTTP), in its seed, and
 * from its own runs (an update that fails before or after its migration, churn's updates).
 */
import { describe, expect, it } from 'vitest';
import { appSchema, installerSchema, restorePointSchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator } from '../src/index.js';
import type { AppRec } from '../src/sim-state.js';
import { apiGet, apiPost, simControl, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({ apps: 60, seed: 4, clock });
const state = sim.control.state;
const busy = () => new Set([...state.activeRuns].map((id) => state.runs.get(id)!.appId));
/** Apps to change, each used by one test only. */
const pool = [...state.apps.values()].filter((a) => a.state === 'running' && !a.upgrade && !busy().has(a.id));
const take = (envType: AppRec['envType'] = 'production'): AppRec => {
  const i = pool.findIndex((a) => a.envType === envType);
  if (i < 0) throw new Error(`no free ${envType} app left in the pool`);
  return pool.splice(i, 1)[0]!;
};
const getApp = async (id: number) => appSchema.parse((await apiGet(sim, `/apps/${id}`)).body.data);
const points = async (appId: number) =>
  ((await apiGet(sim, `/apps/${appId}/restore-points`)).body.data.items as unknown[]).map((p) =>
    restorePointSchema.parse(p),
  );

describe('repositories', () => {
  it('deletes a branch upstream and brings it back', async () => {
    const app = take();
    const main = app.repositories.find((r) => r.main)!.repository;
    sim.control.checks.branches.setRepository(app.id, { deletedUpstream: true });
    expect((await getApp(app.id)).repositories.find((r) => r.repository === main)?.deleted_upstream).toBe(true);
    sim.control.checks.branches.setRepository(app.id, { repository: main, deletedUpstream: false });
    expect((await getApp(app.id)).repositories.every((r) => !r.deleted_upstream)).toBe(true);
  });

  it.each([
    [true, false],
    [false, true],
  ])('behind: %s leaves the repository up_to_date: %s', async (behind, upToDate) => {
    const app = take();
    sim.control.checks.branches.setRepository(app.id, { behind: true });
    sim.control.checks.branches.setRepository(app.id, { behind });
    const repo = (await getApp(app.id)).repositories.find((r) => r.main)!;
    expect(repo.up_to_date).toBe(upToDate);
    expect(repo.deployed_sha === repo.head_sha).toBe(upToDate);
  });

  it('refuses a repository the app does not have', () => {
    expect(() =>
      sim.control.checks.branches.setRepository(take().id, { repository: 'nope', deletedUpstream: true }),
    ).toThrow(/has no repository nope/);
  });
});

describe('upgrades', () => {
  it.each(['standby', 'failed', 'testing'])('gives an app an open upgrade in %s, seen by apps.get', async (word) => {
    const app = take();
    sim.control.checks.upgrades.set(app.id, word, { purpose: 'production' });
    expect((await getApp(app.id)).upgrade).toMatchObject({
      state: word,
      purpose: 'production',
      from_version: app.version,
      source_app_id: app.id,
      source_app: app.name,
    });
  });

  it('keeps the upgrade when only its state moves, and takes it away with null', async () => {
    const app = take();
    const { upgrade } = sim.control.checks.upgrades.set(app.id, 'standby');
    expect(sim.control.checks.upgrades.set(app.id, 'failed').upgrade).toMatchObject({
      id: upgrade!.id,
      state: 'failed',
    });
    sim.control.checks.upgrades.set(app.id, null);
    expect((await getApp(app.id)).upgrade).toBeNull();
  });
});

describe('restore points', () => {
  it.each([
    ['applied', false],
    ['kept', false],
    ['failed', false],
    ['applied', true],
  ] as const)('adds a point %s (held: %s), newest first in restore_points.list', async (outcome, held) => {
    const app = take();
    const added = sim.control.checks.restore_points.add(app.id, { outcome, held });
    const [newest] = await points(app.id);
    expect(newest).toEqual(added);
    expect(newest).toMatchObject({
      app_id: app.id,
      outcome,
      held,
      action: 'update',
      instant_undo: outcome === 'applied',
    });
  });

  it('holds a point and lets it go', async () => {
    const app = take();
    const { id } = sim.control.checks.restore_points.add(app.id, { hoursAgo: 3 });
    expect(sim.control.checks.restore_points.setHeld(id, true).held).toBe(true);
    expect((await points(app.id)).find((p) => p.id === id)?.held).toBe(true);
    sim.control.checks.restore_points.setHeld(id, false);
    expect((await points(app.id)).find((p) => p.id === id)?.held).toBe(false);
  });

  it.each([
    ['build_image', 'kept'],
    ['update_modules', 'failed'],
    ['check', 'failed'],
  ])('an update failing at %s leaves its restore point %s', async (step, outcome) => {
    const app = take('development');
    sim.control.failNextRun({ appId: app.id, step, reason: 'disk full on /var/lib/docker' });
    const { run_id } = (await apiPost(sim, `/apps/${app.id}/update`, {})).body.data as { run_id: number };
    for (let t = 0; t < 30 && sim.control.state.runs.get(run_id)!.state !== 'error'; t++) sim.control.advance(10_000);
    expect((await points(app.id)).find((p) => p.run_id === run_id)?.outcome).toBe(outcome);
  });
});

describe('marketplace services', () => {
  it('puts an installer in error, listed by state', async () => {
    const installer = [...state.installers.values()].find((i) => i.state === 'running')!;
    expect(sim.control.checks.installers.setState(installer.id, 'error')).toMatchObject({
      id: installer.id,
      state: 'error',
    });
    const listed = (await apiGet(sim, '/installers?state=error&limit=200')).body.data.items as unknown[];
    expect(listed.map((i) => installerSchema.parse(i).id)).toContain(installer.id);
    sim.control.checks.installers.setState(installer.id, 'running');
  });
});

describe('the control interface over HTTP', () => {
  it.each([
    [
      'checks.branches.setRepository',
      () => [take().id, { deletedUpstream: true }],
      (d: any) => d.repositories.some((r: any) => r.deleted_upstream),
    ],
    ['checks.upgrades.set', () => [take().id, 'failed'], (d: any) => d.upgrade.state === 'failed'],
    ['checks.restore_points.add', () => [take().id, { outcome: 'applied', held: true }], (d: any) => d.held === true],
    [
      'checks.installers.setState',
      () => [[...state.installers.values()][0]!.id, 'error'],
      (d: any) => d.state === 'error',
    ],
  ] as const)('%s answers the changed record', async (method, args, check) => {
    const answer = await simControl(sim, method, args());
    expect(answer.status, answer.text).toBe(200);
    expect(check(answer.body.data ?? answer.body)).toBe(true);
  });
});

describe('the seed and churn', () => {
  it('seeds 1,000 apps with branches deleted upstream, repositories behind, failed and standby upgrades, failed, kept and held restore points, installers in error', async () => {
    const seeded = await startSimulator({ apps: 1000, seed: 1, clock: new ManualClock('2026-11-01T12:00:00Z') });
    try {
      const s = seeded.control.state;
      const apps = [...s.apps.values()];
      const repos = apps.flatMap((a) => a.repositories);
      const outcomes = new Set([...s.restorePoints.values()].map((p) => p.outcome));
      expect({
        deletedUpstream: repos.some((r) => r.deletedUpstream),
        behind: repos.some((r) => r.deployedSha !== r.headSha),
        upgrades: new Set(apps.flatMap((a) => (a.upgrade ? [a.upgrade.state] : []))),
        failedPoint: outcomes.has('failed'),
        keptPoint: outcomes.has('kept'),
        heldPoint: [...s.restorePoints.values()].some((p) => p.held),
        installerInError: [...s.installers.values()].some((i) => i.state === 'error'),
      }).toEqual({
        deletedUpstream: true,
        behind: true,
        upgrades: new Set(['testing', 'standby', 'failed']),
        failedPoint: true,
        keptPoint: true,
        heldPoint: true,
        installerInError: true,
      });
    } finally {
      await seeded.close();
    }
  });

  it("gives churn's updates restore points, settled by their run", () => {
    const before = new Set(state.restorePoints.keys());
    sim.control.churn(0.5);
    const added = [...state.restorePoints.values()].filter((p) => !before.has(p.id));
    expect(added.length).toBeGreaterThan(0);
    for (const point of added) {
      const run = state.runs.get(point.runId!)!;
      expect(point.outcome).toBe(run.state === 'done' ? 'applied' : 'failed');
    }
  });
});
