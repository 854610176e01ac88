/**
 * The attention job against the simulator, where the service lists at most 20 items per section:
 * an item pushed out of the listed window is still a problem, so it must not resolve (no false
 * "resolved"); it resolves once the section lists every item again and it is not among them. And
 * one problem, one alert: a failed run is one failed_runs alert, not that and an attention item.
 */
import { describe, expect, it } from 'vitest';
import { getAlert, openAlerts } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { engineHarness, eventsOf, MINUTE } from './fixtures.js';

const engine = engineHarness({ apps: 60 });

const RULE = 'attention/certificate_expired/';

/** One URL per app, in the order the simulator lists attention items (by app). */
function urlPerApp(): number[] {
  const byApp = new Map<number, number>();
  for (const url of [...engine.sim.control.state.urls.values()].sort((a, b) => a.appId - b.appId || a.id - b.id)) {
    if (!byApp.has(url.appId)) byApp.set(url.appId, url.id);
  }
  return [...byApp.values()];
}

const firingItems = (w: Watchdog) =>
  openAlerts(w.store)
    .filter((a) => a.fingerprint.startsWith(RULE) && !a.fingerprint.endsWith('/more'))
    .map((a) => a.fingerprint);

describe('a truncated attention section', () => {
  it('keeps alerts pushed out of the listed 20 open, and resolves them only once the section fits again', async () => {
    const { sim, clock } = engine;
    for (const id of sim.control.state.urls.keys()) sim.control.renewCertificate(id);
    const urls = urlPerApp();
    expect(urls.length).toBeGreaterThanOrEqual(40);
    const late = urls.slice(-25);
    const early = urls.slice(0, 5);
    for (const id of late) sim.control.expireCertificate(id, { inDays: -1 });

    const wd = engine.watchdog('checks:\n  attention: { min_severity: info, fold_wait: 0s }');
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const first = firingItems(wd);
    expect(first).toHaveLength(20);
    expect(getAlert(wd.store, `${RULE}more`)?.status).toBe('firing');

    // Five more expire on apps listed before them: five of the first twenty leave the window.
    for (const id of early) sim.control.expireCertificate(id, { inDays: -1 });
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    expect(eventsOf(wd, RULE).filter((e) => e.kind === 'resolved')).toEqual([]);
    const second = firingItems(wd);
    expect(second).toHaveLength(25);
    expect(second).toEqual(expect.arrayContaining(first));

    // Ten renewed (the five new ones and five of the listed ones): 20 in all, every one listed.
    const renewed = [...early, ...late.slice(0, 5)];
    for (const id of renewed) sim.control.renewCertificate(id);
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const resolved = eventsOf(wd, RULE)
      .filter((e) => e.kind === 'resolved')
      .map((e) => e.fingerprint);
    expect(resolved.sort()).toEqual([...renewed.map((id) => `${RULE}url/id/${id}`), `${RULE}more`].sort());
    const still = firingItems(wd);
    expect(still).toHaveLength(20);
    // The ones that had left the window are listed again and were never resolved nor re-announced.
    for (const fp of still) expect(eventsOf(wd, fp).map((e) => e.kind)).toEqual(['firing']);
  });
});

/** A failed update on the first staging app: failed_runs says warning, the dashboard danger. */
function failStagingRun(): { run: string; item: string } {
  const app = [...engine.sim.control.state.apps.values()].find((a) => a.envType === 'staging')!;
  const run = engine.sim.control.addRun({ appId: app.id, action: 'update', state: 'error', reason: 'pip failed' });
  return { run: `failed_runs/run/${run.id}`, item: `attention/failed_run/failure/id/${run.id}` };
}

const kinds = (w: Watchdog, prefix: string) => eventsOf(w, prefix).map((e) => e.kind);

describe('an attention item our own check reports', () => {
  it('a failed run is one alert, even when the dashboard lists it before the runs job reports it', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog();
    const { run, item } = failStagingRun();

    // The dashboard first (as at a start, when every job runs at once): the item waits.
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    expect(getAlert(wd.store, item)?.status).toBe('pending');
    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    expect(getAlert(wd.store, run)).toMatchObject({ status: 'firing', severity: 'warning' });

    // Folded from then on, past fold_wait too: the dashboard's critical never goes out.
    for (let i = 0; i < 6; i++) {
      clock.advance(5 * MINUTE);
      await wd.runOnce(['runs', 'attention']);
    }
    expect(kinds(wd, run)).toEqual(['firing']);
    expect(kinds(wd, item)).toEqual([]);
    const queued = wd.store.db.prepare(
      `SELECT fingerprint FROM outbox WHERE fingerprint LIKE 'attention/failed_run/%'`,
    );
    expect(queued.all()).toEqual([]);

    // Over: ours resolves, and the dashboard's item, never announced, goes quietly.
    sim.control.setRunState(Number(run.split('/').pop()), { state: 'done' });
    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs', 'attention']);
    expect(kinds(wd, run)).toEqual(['firing', 'resolved']);
    expect(kinds(wd, item)).toEqual([]);
    expect(getAlert(wd.store, item)).toBeUndefined();
  });

  it('with the runs check off, nothing of ours reports it: the item alerts on its own once fold_wait is over', async () => {
    const { clock } = engine;
    const wd = engine.watchdog('checks:\n  failed_runs: { enabled: false }\n  attention: { fold_wait: 10m }');
    const { item } = failStagingRun();
    await wd.runOnce(['runs', 'attention']);
    expect(getAlert(wd.store, item)?.status).toBe('pending');
    clock.advance(10 * MINUTE);
    await wd.runOnce(['runs', 'attention']);
    expect(getAlert(wd.store, item)).toMatchObject({ status: 'firing', severity: 'critical' });
  });

  it('an item alerted before ours opened is kept as it is, never falsely resolved, and resolves when it is over', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog('checks:\n  attention: { fold_wait: 0s }');
    const { run, item } = failStagingRun();
    await wd.runOnce(['attention']);
    expect(kinds(wd, item)).toEqual(['firing']);
    await wd.runOnce(['runs']);
    for (let i = 0; i < 3; i++) {
      clock.advance(5 * MINUTE);
      await wd.runOnce(['runs', 'attention']);
    }
    expect(kinds(wd, item)).toEqual(['firing']);
    expect(getAlert(wd.store, item)?.status).toBe('firing');

    sim.control.setRunState(Number(run.split('/').pop()), { state: 'done' });
    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs', 'attention']);
    expect(kinds(wd, item)).toEqual(['firing', 'resolved']);
    expect(kinds(wd, run)).toEqual(['firing', 'resolved']);
  });
});
