/**
 * The attention job against the simulator, where the service lists at most 20 items per section:
 * an item pushed out of the listed window is still a problem, so it must not resolve (no false
 * "resolved"); it resolves once the section lists every item again and it is not among them. And
 * one problem, one alert: a failed run is one failed_runs alert, not that and an attention item.
 * An item no enabled check of ours could report is told in the cycle it appears.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const engine = engineHarness({ apps: 60 });

const RULE = 'attention/certificate_expired/';

/** One URL per app, in the order the simulator lists attention items (by app); of one namespace's apps when given. */
function urlPerApp(nsId?: number): number[] {
  const byApp = new Map<number, number>();
  const { apps, urls } = engine.sim.control.state;
  for (const url of [...urls.values()].sort((a, b) => a.appId - b.appId || a.id - b.id)) {
    if (nsId !== undefined && apps.get(url.appId)?.nsId !== nsId) continue;
    if (!byApp.has(url.appId)) byApp.set(url.appId, url.id);
  }
  return [...byApp.values()];
}

/** The namespace with the most apps, and the others. */
function namespacesBySize(): number[] {
  const count = new Map<number, number>();
  for (const app of engine.sim.control.state.apps.values()) count.set(app.nsId, (count.get(app.nsId) ?? 0) + 1);
  return [...count].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

const firingItems = (w: Watchdog) =>
  alertStoreOf(w.store)
    .open()
    .filter((a) => a.fingerprint.startsWith(RULE) && !a.fingerprint.endsWith('/more'))
    .map((a) => a.fingerprint);

describe('a truncated attention section', () => {
  it('keeps alerts pushed out of the listed 20 open, and resolves them only once the section fits again', async () => {
    const { sim, clock } = engine;
    for (const id of sim.control.state.urls.keys()) sim.control.checks.certificates.renew(id);
    // All in one namespace: read per namespace, it still lists only its first 20.
    const urls = urlPerApp(namespacesBySize()[0]);
    expect(urls.length).toBeGreaterThanOrEqual(30);
    const late = urls.slice(-25);
    const early = urls.slice(0, 5);
    for (const id of late) sim.control.checks.certificates.expire(id, { inDays: -1 });

    const wd = engine.watchdog('checks:\n  attention: { min_severity: info, fold_wait: 0s }');
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const first = firingItems(wd);
    expect(first).toHaveLength(20);
    // Our certificates check reports what the dashboard does not list: no note of the cap.
    expect(alertStoreOf(wd.store).get(`${RULE}more`)).toBeUndefined();

    // Five more expire on apps listed before them: five of the first twenty leave the window.
    for (const id of early) sim.control.checks.certificates.expire(id, { inDays: -1 });
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    expect(eventsOf(wd, RULE).filter((e) => e.kind === 'resolved')).toEqual([]);
    const second = firingItems(wd);
    expect(second).toHaveLength(25);
    expect(second).toEqual(expect.arrayContaining(first));

    // Ten renewed (the five new ones and five of the listed ones): 20 in all, every one listed.
    const renewed = [...early, ...late.slice(0, 5)];
    for (const id of renewed) sim.control.checks.certificates.renew(id);
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const resolved = eventsOf(wd, RULE)
      .filter((e) => e.kind === 'resolved')
      .map((e) => e.fingerprint);
    expect(resolved.sort()).toEqual(renewed.map((id) => `${RULE}url/id/${id}`).sort());
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
    expect(alertStoreOf(wd.store).get(item)?.status).toBe('pending');
    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    expect(alertStoreOf(wd.store).get(run)).toMatchObject({ status: 'firing', severity: 'warning' });

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
    expect(alertStoreOf(wd.store).get(item)).toBeUndefined();
  });

  it('an item alerted before ours opened becomes part of ours: closed quietly, saying so, never paged again', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog('checks:\n  attention: { fold_wait: 0s }');
    const { run, item } = failStagingRun();
    await wd.runOnce(['attention']);
    expect(kinds(wd, item)).toEqual(['firing']);
    await wd.runOnce(['runs']);
    clock.advance(5 * MINUTE);
    await wd.runOnce(['attention']);
    expect(kinds(wd, item)).toEqual(['firing', 'resolved']);
    expect(resolutionOf(wd, item)).toBe(
      `folded into our failed_runs (run ${run.split('/').pop()}) alert, which reports the same record and carries it on`,
    );
    // Its resolve goes to no channel that pages (the log channel keeps no message per alert).
    const decisions = wd.store.db
      .prepare(`SELECT kind, decision FROM outbox WHERE fingerprint = ? ORDER BY id`)
      .all(item) as { kind: string; decision: string }[];
    expect(decisions).toEqual([
      { kind: 'firing', decision: 'deliver' },
      { kind: 'resolved', decision: 'folded' },
    ]);

    for (let i = 0; i < 3; i++) {
      clock.advance(5 * MINUTE);
      await wd.runOnce(['runs', 'attention']);
    }
    sim.control.setRunState(Number(run.split('/').pop()), { state: 'done' });
    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs', 'attention']);
    expect(kinds(wd, item)).toEqual(['firing', 'resolved']);
    expect(kinds(wd, run)).toEqual(['firing', 'resolved']);
  });

  it('a pending item whose record ours reports now is forgotten at once, not left pending', async () => {
    const wd = engine.watchdog();
    const { item } = failStagingRun();
    await wd.runOnce(['attention']);
    expect(alertStoreOf(wd.store).get(item)).toMatchObject({
      status: 'pending',
      hold: {
        reason: expect.stringMatching(
          /^waiting up to 20m \(checks\.attention\.fold_wait\) for failed_runs to report run \d+$/,
        ),
      },
    });
    await wd.runOnce(['runs', 'attention']);
    expect(alertStoreOf(wd.store).get(item)).toBeUndefined();
    expect(kinds(wd, item)).toEqual([]);
  });
});

describe('an attention item no check of ours could report', () => {
  it('"Apps not answering" alerts in the cycle it appears, fold_wait or not, and from check alike', async () => {
    const { sim } = engine;
    const app = [...sim.control.state.apps.values()].find((a) => a.envType === 'production')!;
    sim.control.checks.attention.setAnswering(app.id, false);
    const wd = engine.watchdog();
    const report = await wd.runOnce(['attention']);
    expect(report.complete).toBe(true);
    const fp = `attention/app_not_answering/app/id/${app.id}`;
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({ status: 'firing', severity: 'critical', hold: null });
    expect(kinds(wd, fp)).toEqual(['firing']);
  });

  it('an item of a covered rule whose check is off alerts at once too', async () => {
    const wd = engine.watchdog('checks:\n  failed_runs: { enabled: false }');
    const { item } = failStagingRun();
    await wd.runOnce(['attention']);
    expect(alertStoreOf(wd.store).get(item)).toMatchObject({ status: 'firing', severity: 'critical' });
  });

  it('a rule named in reported_by waits for its check', async () => {
    const { sim } = engine;
    const app = [...sim.control.state.apps.values()].find((a) => a.envType === 'staging')!;
    sim.control.checks.attention.setAnswering(app.id, false);
    const wd = engine.watchdog('checks:\n  attention: { reported_by: { app_not_answering: [app_state] } }');
    await wd.runOnce(['attention']);
    expect(alertStoreOf(wd.store).get(`attention/app_not_answering/app/id/${app.id}`)).toMatchObject({
      status: 'pending',
      hold: { reason: `waiting up to 20m (checks.attention.fold_wait) for app_state to report app ${app.id}` },
    });
  });
});

describe('a capped section read per namespace', () => {
  it('lists past the first 20 when its items are spread over namespaces, so nothing stays unseen', async () => {
    const { sim } = engine;
    for (const id of sim.control.state.urls.keys()) sim.control.checks.certificates.renew(id);
    const [big, small] = namespacesBySize();
    const spread = [...urlPerApp(big).slice(0, 15), ...urlPerApp(small).slice(0, 12)];
    expect(spread).toHaveLength(27);
    for (const id of spread) sim.control.checks.certificates.expire(id, { inDays: -1 });
    sim.control.resetRequests();

    const wd = engine.watchdog('checks:\n  attention: { fold_wait: 0s }');
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    expect(firingItems(wd)).toHaveLength(27);
    expect(alertStoreOf(wd.store).get(`${RULE}more`)).toBeUndefined();
    const reads = sim.control
      .requests()
      .filter((r) => r.fn === 'attention.list')
      .map((r) => r.query);
    expect(reads).toHaveLength(3);
    expect(reads.filter((q) => q.includes('namespace='))).toHaveLength(2);
    // The namespaces are those the runtime's one whoami named: it is not asked again to widen.
    expect(sim.control.requests().filter((r) => r.fn === 'whoami')).toHaveLength(1);
  });

  it('keeps the first 20 when whoami is refused, and does not ask it again each cycle', async () => {
    const { sim } = engine;
    for (const id of sim.control.state.urls.keys()) sim.control.checks.certificates.renew(id);
    const [big, small] = namespacesBySize();
    const spread = [...urlPerApp(big).slice(0, 15), ...urlPerApp(small).slice(0, 12)];
    for (const id of spread) sim.control.checks.certificates.expire(id, { inDays: -1 });
    sim.control.setFault('whoami', { errorCode: 'access_denied' });
    sim.control.resetRequests();
    try {
      const wd = engine.watchdog('checks:\n  attention: { fold_wait: 0s }');
      expect((await wd.runOnce(['attention'])).complete).toBe(true);
      expect(firingItems(wd)).toHaveLength(20);
      expect((await wd.runOnce(['attention'])).complete).toBe(true);
      const fns = sim.control.requests().map((r) => r.fn);
      // The runtime's one whoami: refused, so there is nothing to widen with, in either cycle.
      expect(fns.filter((fn) => fn === 'whoami')).toHaveLength(1);
      expect(fns.filter((fn) => fn === 'attention.list')).toHaveLength(2);
    } finally {
      sim.control.clearFaults();
    }
  });
});
