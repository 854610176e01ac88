/**
 * A vanished record is closed in words that say so, against the simulator: an app deleted, a
 * project disabled. Its alerts resolve as "app deleted" / "project disabled" (looked up with
 * include_deleted, only for the apps of the alerts that vanished), never as if the problem were
 * fixed; and the disappearance of a production app is itself told, once.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const engine = engineHarness({ apps: 40 });

/** An app of `env` with a URL, its certificate expired, and the certificate alert's fingerprint. */
function expiredApp(env: 'production' | 'staging') {
  const { control } = engine.sim;
  const app = [...control.state.apps.values()].find((a) => a.envType === env && a.urlIds.length > 0)!;
  const urlId = app.urlIds[0]!;
  control.checks.certificates.expire(urlId, { inDays: -2 });
  return { app, fingerprint: `certificates/url/${urlId}` };
}

const notices = (wd: Watchdog) =>
  (
    wd.store.db
      .prepare(
        `SELECT COALESCE(b.body, o.payload) AS payload FROM outbox AS o LEFT JOIN outbox_bodies AS b ON b.body_id = o.body_id
       WHERE o.source = 'notice' AND o.kind = 'vanished'`,
      )
      .all() as {
      payload: string;
    }[]
  ).map((r) => (JSON.parse(r.payload) as { title: string }).title);

describe('a record that vanished', () => {
  it('a deleted production app: its alert resolves as "app deleted", and the deletion is told once', async () => {
    const { sim, clock } = engine;
    const { app, fingerprint } = expiredApp('production');
    const wd = engine.watchdog();
    await wd.runOnce(['urls']);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

    sim.control.deleteApp(app.id);
    sim.control.resetRequests();
    clock.advance(15 * MINUTE);
    expect((await wd.runOnce(['urls'])).complete).toBe(true);
    expect(
      eventsOf(wd, fingerprint)
        .filter((e) => e.fingerprint === fingerprint)
        .map((e) => e.kind),
    ).toEqual(['firing', 'resolved']);
    expect(resolutionOf(wd, fingerprint)).toBe(`app deleted: the service lists ${app.name} as deleted`);
    // Looked up for that app alone.
    const lookups = sim.control.requests().filter((r) => r.query.includes('include_deleted=true'));
    expect(lookups.map((r) => r.fn)).toEqual(['apps.list', 'projects.list']);
    expect(notices(wd)).toEqual([`Production app ${app.name} deleted`]);

    clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(notices(wd)).toHaveLength(1);
  });

  it('an app of a disabled project: "project disabled"; a staging app is not told on its own', async () => {
    const { sim, clock } = engine;
    const { app, fingerprint } = expiredApp('staging');
    const wd = engine.watchdog();
    await wd.runOnce(['urls']);
    const project = sim.control.state.projects.get(app.projectId)!;
    sim.control.disableProject(project.id);
    clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(resolutionOf(wd, fingerprint)).toBe(
      `project disabled: ${project.name} is disabled on the service, and its app ${app.name} with it`,
    );
    expect(notices(wd)).toEqual([]);
  });

  it('a certificate renewed on a live app resolves in its own words, with no lookup', async () => {
    const { sim, clock } = engine;
    const { fingerprint } = expiredApp('production');
    const wd = engine.watchdog();
    await wd.runOnce(['urls']);
    sim.control.checks.certificates.renew(Number(fingerprint.split('/').pop()));
    sim.control.resetRequests();
    clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(resolutionOf(wd, fingerprint)).toMatch(/^certificate renewed/);
    expect(sim.control.requests().filter((r) => r.query.includes('include_deleted'))).toEqual([]);
  });

  it("a lookup that fails leaves the check's own words, and the cycle completes", async () => {
    const { sim, clock } = engine;
    const { app, fingerprint } = expiredApp('production');
    const wd = engine.watchdog();
    await wd.runOnce(['urls']);
    sim.control.deleteApp(app.id);
    sim.control.setFault('projects.list', { errorCode: 'internal_error' });
    clock.advance(15 * MINUTE);
    expect((await wd.runOnce(['urls'])).complete).toBe(true);
    expect(resolutionOf(wd, fingerprint)).toBe('the URL is gone from the service');
  });
});
