/**
 * A resolved alert says why it is over, read by its check in the snapshot that resolved it (issue
 * "Alerts an on-call engineer can act on", part 1: "Resolved: why it is over"), end to end against
 * the simulator: the run that succeeded, the newer run, the renewed certificate, the backup taken,
 * the server back. The records open alerts are about are kept by bulk reads even once they are
 * fine, so the URL and backup checks can read them.
 */
import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { describeEvent } from '../../src/notify/channels/describe.js';
import { engineHarness, MINUTE } from './fixtures.js';

const engine = engineHarness();

/** The resolved event of the alert whose fingerprint starts with `prefix`. */
function resolvedOf(wd: Watchdog, prefix: string): AlertEvent {
  const row = wd.store.db
    .prepare(`SELECT id, payload FROM events WHERE fingerprint LIKE ? || '%' AND kind = 'resolved' ORDER BY id`)
    .get(prefix) as { id: number; payload: string } | undefined;
  if (!row) throw new Error(`no resolved event under ${prefix}`);
  return { id: row.id, ...(JSON.parse(row.payload) as Omit<AlertEvent, 'id'>) };
}

/** A URL of a production app, every certificate renewed and check passing first. */
function someUrl(): { id: number; appId: number } {
  const { sim } = engine;
  for (const id of sim.control.state.urls.keys()) {
    sim.control.checks.certificates.renew(id);
    sim.control.checks.url_checks.pass(id);
  }
  const url = [...sim.control.state.urls.values()][0]!;
  return { id: url.id, appId: url.appId };
}

describe('a resolved alert says why it is over', () => {
  it('a failed run that now succeeded: "run #N succeeded after a retry"', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog('jobs: { urls: "off", backups: "off", attention: "off", maintenance: "off" }');
    const run = sim.control.addRun({ appId: 3, action: 'update', state: 'error', failedStep: 'restart', reason: 'x' });
    await wd.runOnce(['runs']);
    sim.control.setRunState(run.id, { state: 'done' });
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    const resolved = resolvedOf(wd, `failed_runs/run/${run.id}`);
    expect(resolved.resolution).toBe(`run #${run.id} succeeded after a retry`);
    // Shown in every channel's words: the one-line form of grouped lines and the "Why" of a full one.
    const shown = describeEvent(resolved, clock.now());
    expect(shown.brief).toMatch(new RegExp(`^resolved after .*: run #${run.id} succeeded after a retry$`));
    expect(shown.resolution).toBe(`run #${run.id} succeeded after a retry`);
  });

  it('a failed run superseded by a newer one of the same app and action: "a newer update (run #M) succeeded"', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog('jobs: { urls: "off", backups: "off", attention: "off", maintenance: "off" }');
    const run = sim.control.addRun({ appId: 4, action: 'update', state: 'error', failedStep: 'restart', reason: 'x' });
    await wd.runOnce(['runs']);
    clock.advance(MINUTE);
    sim.control.advance(MINUTE);
    const newer = sim.control.addRun({ appId: 4, action: 'update', state: 'done' });
    await wd.runOnce(['runs']);
    expect(resolvedOf(wd, `failed_runs/run/${run.id}`).resolution).toBe(`a newer update (run #${newer.id}) succeeded`);
  });

  it('a certificate renewed: "certificate renewed: valid until …", though a fine URL is not otherwise kept', async () => {
    const { sim, clock } = engine;
    const url = someUrl();
    sim.control.checks.certificates.expire(url.id, { inDays: 2 });
    const wd = engine.watchdog('jobs: { runs: "off", backups: "off", attention: "off", maintenance: "off" }');
    await wd.runOnce(['urls']);
    sim.control.checks.certificates.renew(url.id);
    clock.advance(MINUTE);
    await wd.runOnce(['urls']);
    expect(resolvedOf(wd, `certificates/url/${url.id}`).resolution).toMatch(
      /^certificate renewed: valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
    );
  });

  it('an outside check passing again: "outside check passed at …"', async () => {
    const { sim, clock } = engine;
    const url = someUrl();
    sim.control.checks.url_checks.fail(url.id, 'http_502');
    const wd = engine.watchdog('jobs: { runs: "off", backups: "off", attention: "off", maintenance: "off" }');
    await wd.runOnce(['urls']);
    sim.control.checks.url_checks.pass(url.id);
    clock.advance(MINUTE);
    await wd.runOnce(['urls']);
    expect(resolvedOf(wd, `url_checks/url/${url.id}`).resolution).toMatch(/^outside check passed at .* UTC$/);
  });

  it('a stale backup: the backup taken since, when, and that it was verified', async () => {
    const { sim, clock } = engine;
    const state = sim.control.state;
    const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
    const app = [...state.apps.values()].find(
      (a) => a.envType === 'production' && !busy.has(a.id) && state.backupIndex.byApp(a.id).length > 0,
    )!;
    sim.control.checks.backups.age(app.id, { hours: 48 });
    const wd = engine.watchdog('jobs: { runs: "off", urls: "off", attention: "off", maintenance: "off" }');
    await wd.runOnce(['backups']);
    clock.advance(MINUTE);
    const backup = sim.control.checks.backups.add(app.id);
    await wd.runOnce(['backups']);
    expect(resolvedOf(wd, `backups/app/${app.id}/stale`).resolution).toMatch(
      new RegExp(`^backup ${backup.name.replace(/[.]/g, '\\.')} taken .* UTC, verified$`),
    );
  });

  it('a server back up: "server X is running now"', async () => {
    const { sim, clock } = engine;
    const server = [...sim.control.state.servers.values()][0]!;
    sim.control.checks.servers.setState(server.id, 'error');
    const wd = engine.watchdog();
    await wd.runOnce(['servers']);
    sim.control.checks.servers.setState(server.id, 'running');
    clock.advance(MINUTE);
    await wd.runOnce(['servers']);
    expect(resolvedOf(wd, 'servers/').resolution).toBe(`server ${server.name} is running now`);
  });
});
