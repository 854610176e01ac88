/**
 * Backups judged by their state, end to end against the simulator: collector → detector →
 * lifecycle, one ManualClock shared by both. Only a backup that finished well clears a stale alert;
 * a failed one is an alert of its own, and one still running (the `apps.backup` remediation starts
 * exactly such a backup) changes nothing until it finishes.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { apiGet, apiPost } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE } from './fixtures.js';

const h = engineHarness();
/** Only the backups job; the others are read by their own tests. */
const BACKUPS_ONLY = 'jobs: { runs: "off", attention: "off", urls: "off", maintenance: "off", servers: "off" }';

/** A production app with backups and nothing running, its backups aged so its newest is two days old. */
function staleProductionApp(sim: RunningSimulator): number {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const app = [...state.apps.values()].find(
    (a) => a.envType === 'production' && !busy.has(a.id) && state.backupIndex.byApp(a.id).length > 0,
  );
  if (!app) throw new Error('no production app with backups');
  sim.control.checks.backups.age(app.id, { hours: 48 });
  return app.id;
}

/** The kinds of the events of every backups alert of the app but backup_health (the service's own, which follows the age). */
function eventsAbout(wd: Parameters<typeof eventsOf>[0], appId: number): string[] {
  return eventsOf(wd, `backups/app/${appId}/`)
    .filter((e) => !e.fingerprint.endsWith('/health'))
    .map((e) => `${e.fingerprint.slice(`backups/app/${appId}/`.length)} ${e.kind}`);
}

describe('backups judged by state through the lifecycle', () => {
  it('a failed backup keeps the stale alert firing and fires its own; a running one changes nothing; a good one resolves both', async () => {
    const wd = h.watchdog(BACKUPS_ONLY);
    const appId = staleProductionApp(h.sim);
    expect((await wd.runOnce(['backups'])).complete).toBe(true);
    expect(eventsAbout(wd, appId)).toEqual(['stale firing']);

    h.sim.control.checks.backups.add(appId, { state: 'failed', verified: false });
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual(['stale firing', 'failed firing']);
    expect(alertStoreOf(wd.store).get(`backups/app/${appId}/stale`)?.summary).toMatch(
      /^No successful backup of \S+ \(production\) for 2d \(max 1d 2h\); newest: #\d+ failed 1m ago$/,
    );

    // A retry running on top: the failed one is still the newest finished; nothing unverified.
    h.sim.control.checks.backups.add(appId, { state: 'running', verified: false });
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual(['stale firing', 'failed firing']);

    h.sim.control.checks.backups.add(appId, { automated: true });
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    const events = eventsAbout(wd, appId);
    expect(events.slice(0, 2)).toEqual(['stale firing', 'failed firing']);
    expect(events.slice(2).sort()).toEqual(['failed resolved', 'stale resolved']);
  });

  it("a backup started by apps.backup (the remediation's own change) does not resolve the stale alert while it runs, and does once it finished well", async () => {
    const wd = h.watchdog(BACKUPS_ONLY);
    const appId = staleProductionApp(h.sim);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual(['stale firing']);

    const started = await apiPost(h.sim, `/apps/${appId}/backup`, { format: 'zip' });
    expect(started.status).toBe(200);
    const backupId = started.body.data.backup_id as number;
    // Cycles while the backup runs (its steps take 20-60 s each, then the watcher reports back).
    for (let i = 0; i < 2; i++) {
      h.clock.advance(10_000);
      await wd.runOnce(['backups']);
      expect((await apiGet(h.sim, `/backups/${backupId}`)).body.data.state).toBe('running');
    }
    expect(eventsAbout(wd, appId)).toEqual(['stale firing']);
    expect(alertStoreOf(wd.store).get(`backups/app/${appId}/stale`)?.summary).toMatch(
      new RegExp(`; newest: #${backupId} running \\d+s ago$`),
    );

    h.clock.advance(10 * MINUTE);
    expect((await apiGet(h.sim, `/backups/${backupId}`)).body.data.state).toBe('done');
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual(['stale firing', 'stale resolved']);
  });

  it('a good backup gone from the server whose off-site copy failed is kept nowhere: critical in production, until a backup is kept', async () => {
    const wd = h.watchdog(BACKUPS_ONLY);
    const appId = staleProductionApp(h.sim);
    const backup = h.sim.control.checks.backups.add(appId, { offsiteError: 'upload failed: connection reset' });
    const storage = backup.offsite[0]!.storage;
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual([`offsite/${storage} firing`]);

    // Reference §2: on_server false, "only off-site copies are left"; and none is on its storage.
    h.sim.control.checks.backups.removeFromServer(backup.id);
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId)).toEqual([`offsite/${storage} firing`, 'lost firing']);
    expect(alertStoreOf(wd.store).get(`backups/app/${appId}/lost`)).toMatchObject({
      severity: 'critical',
      summary: expect.stringMatching(
        /^Newest successful backup of \S+ \(production\) is kept nowhere: not on the server/,
      ),
    });

    h.sim.control.checks.backups.add(appId, {});
    h.clock.advance(MINUTE);
    await wd.runOnce(['backups']);
    expect(eventsAbout(wd, appId).slice(2).sort()).toEqual(['lost resolved', `offsite/${storage} resolved`]);
  });
});
