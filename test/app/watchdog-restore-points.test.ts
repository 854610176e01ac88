/**
 * Restore points, end to end against the simulator: with `checks.restore_points` on, the
 * maintenance job reads each app's newest restore points (one request per app) and raises one alert
 * for a point an app is held at (set through the simulator's control interface), resolved when the
 * point is let go; off (the default), it reads none.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { simControl } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const h = engineHarness();
const ON = 'checks: { restore_points: { enabled: true } }';

/** A running production app of the seed, none of its points held. */
function productionApp(): { id: number; name: string } {
  const held = new Set([...h.sim.control.state.restorePoints.values()].filter((p) => p.held).map((p) => p.appId));
  const app = [...h.sim.control.state.apps.values()].find(
    (a) => a.state === 'running' && a.envType === 'production' && !held.has(a.id),
  );
  expect(app, 'a running production app').toBeDefined();
  return app!;
}

/** Calls the simulator's control interface as an out-of-process test would; answers the record. */
async function control(method: string, args: unknown[]): Promise<{ id: number }> {
  const answer = await simControl(h.sim, method, args);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data ?? answer.body;
}

/** The apps the maintenance job reads: `apps.list` gives them. */
const listed = () => [...h.sim.control.state.apps.values()].filter((a) => !['deleted', 'disabled'].includes(a.state));

describe('an app held at a restore point', () => {
  it('fires one warning while the point is held, reading one page of restore points per app, and resolves when it is let go', async () => {
    const wd = h.watchdog(ON);
    const app = productionApp();
    await wd.runOnce(['maintenance']);
    const point = await control('checks.restore_points.add', [app.id, { outcome: 'applied', held: true, hoursAgo: 2 }]);
    const fp = `restore_points/held/${point.id}`;

    h.clock.advance(MINUTE);
    h.sim.control.resetRequests();
    expect((await wd.runOnce(['maintenance'])).complete).toBe(true);
    const reads = h.sim.control.requests().filter((r) => r.fn === 'restore_points.list');
    expect(reads).toHaveLength(listed().length);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'warning',
      summary: `${app.name} (production) was rolled back to restore point #${point.id} (from before its update) and is held there: its auto-updates wait until the point is let go`,
      labels: { check: 'restore_points', app: app.name },
    });

    h.clock.advance(MINUTE);
    await control('checks.restore_points.setHeld', [point.id, false]);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(wd, fp)).toBe(`restore point #${point.id} was let go`);
  });

  it('is not looked for by default: no restore point is read', async () => {
    const wd = h.watchdog();
    const app = productionApp();
    await control('checks.restore_points.add', [app.id, { held: true }]);
    h.sim.control.resetRequests();
    await wd.runOnce(['maintenance']);
    expect(h.sim.control.requests().filter((r) => r.fn === 'restore_points.list')).toEqual([]);
    expect(eventsOf(wd, 'restore_points/')).toEqual([]);
  });
});
