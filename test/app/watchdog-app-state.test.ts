/**
 * An app in a bad state, end to end against the simulator: the backups job raises one app_state
 * alert when the app's state (set through the simulator's control interface) is one of
 * `checks.app_state.bad_states`, and resolves it when the app is back; with the backups check off
 * the job still runs for app_state, reading the apps and no backup.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { BAD_APP_STATES } from '../../src/config/state-words.js';
import { simControl } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE } from './fixtures.js';

const h = engineHarness();

/** A running production app of the seed. */
function productionApp(): { id: number; name: string } {
  const app = [...h.sim.control.state.apps.values()].find((a) => a.state === 'running' && a.envType === 'production');
  expect(app, 'a running production app').toBeDefined();
  return app!;
}

/** Sets an app's state over the simulator's control interface, as an out-of-process test would. */
async function setAppState(appId: number, state: string): Promise<void> {
  const answer = await simControl(h.sim, 'checks.app_state.set', [appId, state]);
  expect(answer.status, answer.text).toBe(200);
}

describe('an app in a bad state', () => {
  it('fires one critical alert in production while its state is bad, and resolves when it is back', async () => {
    const wd = h.watchdog();
    const app = productionApp();
    const fp = `app_state/app/${app.id}`;
    await wd.runOnce(['backups']);
    expect(eventsOf(wd, fp)).toEqual([]);

    h.clock.advance(MINUTE);
    await setAppState(app.id, 'error');
    expect((await wd.runOnce(['backups'])).complete).toBe(true);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'critical',
      summary: `App ${app.name} (production) is error`,
      labels: { check: 'app_state', app: app.name, environment_type: 'production' },
      facts: [{ label: 'State', value: 'error' }],
      brief: 'state error',
    });

    // Another bad word is the same problem; a good one ends it.
    h.clock.advance(MINUTE);
    await setAppState(
      app.id,
      BAD_APP_STATES.find((s) => s !== 'error')!,
    );
    await wd.runOnce(['backups']);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    h.clock.advance(MINUTE);
    await setAppState(app.id, 'running');
    await wd.runOnce(['backups']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
  });

  it('takes its bad states from the config', async () => {
    const wd = h.watchdog('checks: { app_state: { bad_states: [stopped] } }');
    const app = productionApp();
    await setAppState(app.id, 'error');
    await wd.runOnce(['backups']);
    expect(eventsOf(wd, `app_state/app/${app.id}`)).toEqual([]);
  });

  it('is found by the backups job with the backups check off, which then reads no backup', async () => {
    const wd = h.watchdog('checks: { backups: { enabled: false } }');
    const app = productionApp();
    await setAppState(app.id, 'stopped');
    h.sim.control.resetRequests();
    expect((await wd.runOnce(['backups'])).complete).toBe(true);
    expect(eventsOf(wd, `app_state/app/${app.id}`)).toEqual([
      { kind: 'firing', fingerprint: `app_state/app/${app.id}` },
    ]);
    expect(eventsOf(wd, 'backups/')).toEqual([]);
    const functions = new Set(h.sim.control.requests().map((r) => r.fn));
    expect(functions.has('apps.list')).toBe(true);
    expect(functions.has('backups.list')).toBe(false);
  });
});
