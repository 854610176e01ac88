/**
 * Upgrades, end to end against the simulator: the maintenance job raises an upgrades alert when an
 * app's open upgrade failed (after `fold_wait`, unless its failed run's alert reports it: then it
 * is folded into that one) or has waited in standby longer than
 * `checks.upgrades.standby_max_duration` (set through the simulator's control interface), from the
 * `apps.get` it makes anyway, and resolves it when the upgrade moves on or is gone.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { simControl } from '../helpers/simulator.js';
import { captureLogger, engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const h = engineHarness();
const HOUR = 60 * MINUTE;

/** A running production app of the seed without an open upgrade. */
function productionApp(): { id: number; name: string } {
  const app = [...h.sim.control.state.apps.values()].find(
    (a) => a.state === 'running' && a.envType === 'production' && !a.upgrade,
  );
  expect(app, 'a running production app').toBeDefined();
  return app!;
}

/** Sets an app's upgrade over the simulator's control interface, as an out-of-process test would. */
async function setUpgrade(appId: number, state: string | null, purpose = 'production'): Promise<number | null> {
  const answer = await simControl(h.sim, 'checks.upgrades.set', [appId, state, { purpose }]);
  expect(answer.status, answer.text).toBe(200);
  return (answer.body.data ?? answer.body).upgrade?.id ?? null;
}

describe('an upgrade that failed', () => {
  it('fires after fold_wait, critical for a production upgrade in production, from apps.get alone; resolves when it is gone', async () => {
    const wd = h.watchdog();
    const app = productionApp();
    const id = await setUpgrade(app.id, 'failed');
    const fp = `upgrades/failed/${id}`;
    h.sim.control.resetRequests();
    expect((await wd.runOnce(['maintenance'])).complete).toBe(true);
    // Beside the start-up's whoami, only what the job reads anyway.
    const functions = h.sim.control.requests().map((r) => r.fn);
    expect(new Set(functions.filter((fn) => fn !== 'whoami'))).toEqual(new Set(['apps.list', 'apps.get']));
    // No failed run reports it: it waits the default fold_wait (5m) for one, then fires.
    expect(alertStoreOf(wd.store).get(fp)?.status).toBe('pending');
    h.clock.advance(5 * MINUTE);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'critical',
      summary: expect.stringMatching(
        new RegExp(`^Upgrade of ${app.name} \\(production\\) from .* \\(production\\) failed$`),
      ),
      labels: { check: 'upgrades', app: app.name, purpose: 'production' },
    });

    h.clock.advance(MINUTE);
    await setUpgrade(app.id, null);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(wd, fp)).toBe('the upgrade is closed');
  });
});

describe('an upgrade whose run failed: one problem, one alert', () => {
  it("is folded into the failed run's alert, whichever job reads it first", async () => {
    const capture = captureLogger('debug');
    const wd = h.watchdog('', { logger: capture.logger });
    const app = productionApp();
    const id = await setUpgrade(app.id, 'failed');
    const fp = `upgrades/failed/${id}`;
    // The maintenance job reads it first: it waits for the run's alert.
    await wd.runOnce(['maintenance']);
    expect(alertStoreOf(wd.store).get(fp)?.status).toBe('pending');

    const added = await simControl(h.sim, 'addRun', [{ appId: app.id, workflow: 'app_upgrade', state: 'error' }]);
    expect(added.status, added.text).toBe(200);
    const runId = (added.body.data ?? added.body).id as number;
    h.clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect(alertStoreOf(wd.store).get(`failed_runs/run/${runId}`)?.status).toBe('firing');

    // Past fold_wait, the upgrade is still failed, and its run's alert says it: no second alert.
    h.clock.advance(10 * MINUTE);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([]);
    expect(capture.lines()).toContainEqual(
      expect.objectContaining({ fingerprint: fp, reason: `reported by failed_runs (run ${runId})` }),
    );
    expect(wd.store.db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE fingerprint = ?`).get(fp)).toEqual({ n: 0 });
  });
});

describe('an upgrade in standby', () => {
  it('fires only once seen in standby for standby_max_duration, and resolves when it moves on', async () => {
    const wd = h.watchdog('checks: { upgrades: { standby_max_duration: 2h } }');
    const app = productionApp();
    const id = await setUpgrade(app.id, 'standby', 'test');
    const fp = `upgrades/standby/${id}`;
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([]);
    expect(alertStoreOf(wd.store).get(fp)?.status).toBe('pending');

    h.clock.advance(2 * HOUR + MINUTE);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      severity: 'warning',
      facts: expect.arrayContaining([{ label: 'Allowed in standby', value: '2h' }]),
    });

    h.clock.advance(MINUTE);
    await setUpgrade(app.id, 'testing', 'test');
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(wd, fp)).toBe('the upgrade is testing now');
  });

  it('says an upgrade state no list names, once, read from apps.get', async () => {
    const capture = captureLogger('warn');
    const wd = h.watchdog('', { logger: capture.logger });
    await setUpgrade(productionApp().id, 'paused');
    await wd.runOnce(['maintenance']);
    await wd.runOnce(['maintenance']);
    const said = capture.lines().filter((l) => String(l.msg).includes('"paused"'));
    expect(said.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^apps\.get reports the upgrade state "paused" \(1 upgrade\)/),
    ]);
  });

  it('takes its states from the config', async () => {
    const wd = h.watchdog('checks: { upgrades: { failed_states: [broken], fold_wait: 0s } }');
    const app = productionApp();
    const id = await setUpgrade(app.id, 'failed');
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, `upgrades/failed/${id}`)).toEqual([]);
    await setUpgrade(app.id, 'broken');
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, `upgrades/failed/${id}`)).toEqual([{ kind: 'firing', fingerprint: `upgrades/failed/${id}` }]);
  });
});
