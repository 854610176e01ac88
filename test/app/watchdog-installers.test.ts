/**
 * Marketplace services, end to end against the simulator: the installers job reads
 * `installers.list` and raises one alert per service in a bad state (set through the simulator's
 * control interface), resolved when the service is back; a token without `ansible_installer: read`
 * switches that job off with one alert and leaves the servers job reading.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { simControl } from '../helpers/simulator.js';
import {
  captureLogger,
  engineConfig,
  engineHarness,
  eventsOf,
  MINUTE,
  openWatchdog,
  resolutionOf,
} from './fixtures.js';

/** A token that reads everything but marketplace services. */
const NO_INSTALLERS = 'token-without-installer-read';
const h = engineHarness({
  tokens: [
    {
      token: NO_INSTALLERS,
      namespaces: '*',
      permissions: ['deployment_app: read', 'deployment_server: read', 'workspace: read'],
    },
  ],
});

/** A running service of the seed. */
function runningService(): { id: number; name: string } {
  const installer = [...h.sim.control.state.installers.values()].find((i) => i.state === 'running');
  expect(installer, 'a running service').toBeDefined();
  return installer!;
}

/** Sets a service's state over the simulator's control interface, as an out-of-process test would. */
async function setInstallerState(id: number, state: string): Promise<void> {
  const answer = await simControl(h.sim, 'checks.installers.setState', [id, state]);
  expect(answer.status, answer.text).toBe(200);
}

describe('a marketplace service in a bad state', () => {
  it('fires one warning from installers.list alone, and resolves when the service is back', async () => {
    const wd = h.watchdog();
    const service = runningService();
    const fp = `installers/installer/${service.id}`;
    await wd.runOnce(['installers']);
    expect(eventsOf(wd, fp)).toEqual([]);

    h.clock.advance(MINUTE);
    await setInstallerState(service.id, 'error');
    h.sim.control.resetRequests();
    expect((await wd.runOnce(['installers'])).complete).toBe(true);
    expect(new Set(h.sim.control.requests().map((r) => r.fn))).toEqual(new Set(['installers.list']));
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'warning',
      labels: { check: 'installers', installer: service.name },
      facts: expect.arrayContaining([{ label: 'State', value: 'error' }]),
    });

    h.clock.advance(MINUTE);
    await setInstallerState(service.id, 'running');
    await wd.runOnce(['installers']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(wd, fp)).toBe('the service is running now');
  });

  it('takes its bad states from the config', async () => {
    const wd = h.watchdog('checks: { installers: { bad_states: [stopped] } }');
    const service = runningService();
    await setInstallerState(service.id, 'error');
    await wd.runOnce(['installers']);
    expect(eventsOf(wd, `installers/installer/${service.id}`)).toEqual([]);
    await setInstallerState(service.id, 'stopped');
    await wd.runOnce(['installers']);
    expect(eventsOf(wd, `installers/installer/${service.id}`)).toHaveLength(1);
  });

  it('says a service state no list names, once, with the lists it could go in', async () => {
    const capture = captureLogger('warn');
    const wd = h.watchdog('', { logger: capture.logger });
    await setInstallerState(runningService().id, 'degraded');
    await wd.runOnce(['installers']);
    await wd.runOnce(['installers']);
    const said = capture.lines().filter((l) => String(l.msg).includes('"degraded"'));
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(
      /^installers\.list reports the installer state "degraded" \(1 installer\).*checks\.installers\.bad_states: error; checks\.installers\.stopped_states: stopped; checks\.installers\.other_states: running\)$/,
    );
  });

  it('is switched off with one alert when the token cannot read services; the servers job reads on', async () => {
    let wd: Watchdog | undefined;
    try {
      wd = openWatchdog(engineConfig(h.sim, h.dir, '', NO_INSTALLERS), h.clock);
      const reports = await wd.runOnce(['servers', 'installers']);
      expect(reports.jobs.map((r) => [r.job, r.outcome])).toEqual([
        ['servers', 'ok'],
        ['installers', 'disabled'],
      ]);
      expect(alertStoreOf(wd.store).get('watchdog/disabled/installers')).toMatchObject({
        status: 'firing',
        summary: 'installers check disabled: the token lacks ansible_installer: read',
      });
    } finally {
      await wd?.stop(1_000);
    }
  });
});
