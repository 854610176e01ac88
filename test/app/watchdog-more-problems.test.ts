/**
 * The problems the reference makes observable (issue 22, item 5), end to end against the
 * simulator: each staged over its control interface (HTTP, as an out-of-process test would), read
 * by the daemon's own jobs, fired (or held back, or held under its cause) and resolved with the
 * words that say why.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { AppRec } from '../../packages/simulator/src/sim-state.js';
import { simControl } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const HOUR = 60 * MINUTE;
const h = engineHarness();

/** A deployed production app that runs, outside maintenance and any upgrade, with a URL. */
function prodApp(skip: readonly number[] = []): AppRec {
  const app = [...h.sim.control.state.apps.values()].find(
    (a) =>
      a.envType === 'production' &&
      a.state === 'running' &&
      a.deployedAt !== null &&
      !a.maintenance &&
      a.upgrade === null &&
      a.urlIds.length > 0 &&
      !skip.includes(a.id),
  );
  expect(app, 'a production app of the seed').toBeDefined();
  return app!;
}

async function control(method: string, ...args: unknown[]): Promise<void> {
  const answer = await simControl(h.sim, method, args);
  expect(answer.status, answer.text).toBe(200);
}

/** The outbox's decision about the newest event of an alert (deliver, inhibited …). */
function decisionOf(wd: Watchdog, fingerprint: string): { decision: string; heldBy: string | null } | undefined {
  return wd.store.db
    .prepare(`SELECT decision, held_by AS heldBy FROM outbox WHERE fingerprint = ? ORDER BY id DESC`)
    .get(fingerprint) as { decision: string; heldBy: string | null } | undefined;
}

describe('backups: only a full backup counts, and its size and copies are judged', () => {
  it('a dump does not clear a stale alert; a zip does, and says which', async () => {
    const wd = h.watchdog();
    const app = prodApp();
    const fp = `backups/app/${app.id}/stale`;
    await control('checks.backups.age', app.id, { hours: 30 });
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(fp)?.status).toBe('firing');

    h.clock.advance(MINUTE);
    await control('checks.backups.add', app.id, { format: 'dump' });
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({ status: 'firing' });
    expect(alertStoreOf(wd.store).get(fp)?.summary).toMatch(/\(format dump: not a full backup\)$/);

    h.clock.advance(MINUTE);
    await control('checks.backups.add', app.id, { format: 'zip' });
    await wd.runOnce(['backups']);
    expect(eventsOf(wd, fp).map((e) => e.kind)).toEqual(['firing', 'resolved']);
    expect(resolutionOf(wd, fp)).toMatch(/^backup \S+\.zip taken .* UTC, verified$/);
  });

  it('an empty backup pages like a failed one; a shrunken one warns; a good one resolves both', async () => {
    const wd = h.watchdog();
    const app = prodApp();
    const fp = `backups/app/${app.id}/size`;
    await control('checks.backups.add', app.id, { sizeMb: 0 });
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({ status: 'firing', severity: 'critical' });

    h.clock.advance(MINUTE);
    await control('checks.backups.add', app.id, { sizeMb: 1 });
    await wd.runOnce(['backups']);
    // The empty one is among the good backups before it now: the median of the others still stands.
    expect(alertStoreOf(wd.store).get(fp)?.summary).toMatch(/shrank to 0% of its usual size/);

    h.clock.advance(MINUTE);
    await control('checks.backups.add', app.id, { sizeMb: 100_000 });
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(fp)?.status).toBe('resolved');
    expect(resolutionOf(wd, fp)).toMatch(/: 100000 MB$/);
  });

  it('a good backup without an off-site copy, and an upload that never ends, are told', async () => {
    const wd = h.watchdog();
    const [one, two] = [prodApp(), prodApp([prodApp().id])];
    await control('checks.backups.add', one.id, { offsite: 'none' });
    await control('checks.backups.add', two.id, { offsite: 'uploading' });
    await wd.runOnce(['backups']);
    expect(alertStoreOf(wd.store).get(`backups/app/${one.id}/no_offsite`)?.status).toBe('firing');
    const stuck = wd.store.db
      .prepare(`SELECT fingerprint FROM alerts WHERE fingerprint LIKE ?`)
      .all(`backups/app/${two.id}/offsite/%`);
    expect(stuck, 'an upload under way for minutes is no problem').toEqual([]);

    h.clock.advance(7 * HOUR);
    await wd.runOnce(['backups']);
    const [alert] = wd.store.db
      .prepare(`SELECT fingerprint, summary FROM alerts WHERE fingerprint LIKE ?`)
      .all(`backups/app/${two.id}/offsite/%`) as { fingerprint: string; summary: string }[];
    expect(alert?.summary).toMatch(/is not uploaded 7h after the backup$/);

    await control('checks.backups.add', one.id, {});
    await control('checks.backups.add', two.id, {});
    await wd.runOnce(['backups']);
    expect(resolutionOf(wd, `backups/app/${one.id}/no_offsite`)).toMatch(/: off-site copies stored$/);
    expect(resolutionOf(wd, alert!.fingerprint)).toMatch(/: off-site copies stored$/);
  });
});

describe('URLs and certificates', () => {
  it('an outside check that did not run, or stopped, is told; it running again resolves it', async () => {
    const wd = h.watchdog();
    const app = prodApp();
    const [first, second] = [app.urlIds[0]!, app.urlIds[1] ?? prodApp([app.id]).urlIds[0]!];
    await control('checks.url_checks.skip', first, 'dns_not_configured', { hoursAgo: 13 });
    await control('checks.url_checks.stop', second, { hoursAgo: 20 });
    await wd.runOnce(['urls']);
    const skipped = alertStoreOf(wd.store).get(`url_checks/url/${first}/unchecked`);
    expect(skipped).toMatchObject({ status: 'firing', severity: 'warning' });
    expect(skipped?.summary).toMatch(/has not been checked from outside for 13h: not checked \(dns_not_configured\)$/);
    expect(alertStoreOf(wd.store).get(`url_checks/url/${second}/unchecked`)?.summary).toMatch(
      /for 20h \(last: passed\)$/,
    );

    h.clock.advance(MINUTE);
    await control('checks.url_checks.pass', first);
    await wd.runOnce(['urls']);
    expect(resolutionOf(wd, `url_checks/url/${first}/unchecked`)).toMatch(/^outside check passed at .* UTC$/);
  });

  it('a certificate in error pages in production; one unknown for a day warns, then its status resolves it', async () => {
    const wd = h.watchdog();
    const app = prodApp();
    const [first, second] = [app.urlIds[0]!, app.urlIds[1] ?? prodApp([app.id]).urlIds[0]!];
    await control('checks.certificates.setStatus', first, 'error');
    await control('checks.certificates.setStatus', second, 'unknown');
    await wd.runOnce(['urls']);
    expect(alertStoreOf(wd.store).get(`certificates/url/${first}`)).toMatchObject({
      status: 'firing',
      severity: 'critical',
    });
    expect(alertStoreOf(wd.store).get(`certificates/url/${second}`)?.status).toBe('pending');

    h.clock.advance(25 * HOUR);
    await wd.runOnce(['urls']);
    expect(alertStoreOf(wd.store).get(`certificates/url/${second}`)).toMatchObject({
      status: 'firing',
      severity: 'warning',
    });

    await control('checks.certificates.setStatus', second, null);
    await wd.runOnce(['urls']);
    expect(resolutionOf(wd, `certificates/url/${second}`)).toMatch(/^certificate status is valid now, valid until /);
  });
});

describe('upgrades and services that stay put', () => {
  it('an upgrade left in testing, and a service left stopped, alert once their time is up', async () => {
    const wd = h.watchdog();
    const app = prodApp();
    const service = [...h.sim.control.state.installers.values()].find((i) => i.state === 'running')!;
    await control('checks.upgrades.set', app.id, 'testing');
    await control('checks.installers.setState', service.id, 'stopped');
    await wd.runOnce(['maintenance', 'installers']);
    const upgrade = wd.store.db
      .prepare(`SELECT fingerprint, status FROM alerts WHERE fingerprint LIKE 'upgrades/stuck/%'`)
      .all() as { fingerprint: string; status: string }[];
    expect(upgrade.map((u) => u.status)).toContain('pending');
    expect(alertStoreOf(wd.store).get(`installers/installer/${service.id}`)?.status).toBe('pending');

    h.clock.advance(2 * HOUR);
    await wd.runOnce(['installers']);
    expect(alertStoreOf(wd.store).get(`installers/installer/${service.id}`)?.status).toBe('firing');
    h.clock.advance(5 * HOUR);
    await wd.runOnce(['maintenance']);
    const mine = upgrade.find((u) => alertStoreOf(wd.store).get(u.fingerprint)?.labels.app === app.name)!;
    expect(alertStoreOf(wd.store).get(mine.fingerprint)?.status).toBe('firing');

    await control('checks.upgrades.set', app.id, 'done');
    await control('checks.installers.setState', service.id, 'running');
    await wd.runOnce(['maintenance', 'installers']);
    expect(resolutionOf(wd, mine.fingerprint)).toBe('the upgrade is done now');
    expect(resolutionOf(wd, `installers/installer/${service.id}`)).toBe('the service is running now');
  });
});

describe('one cause, one page', () => {
  it("an app in maintenance holds its URL alerts; a stopped app's URL alerts are held under its own", async () => {
    const wd = h.watchdog();
    const resting = prodApp();
    const stopped = prodApp([resting.id]);
    await control('checks.maintenance.set', resting.id, true);
    await control('checks.app_state.set', stopped.id, 'stopped');
    await wd.runOnce(['maintenance', 'backups']);
    expect(alertStoreOf(wd.store).get(`maintenance/app/${resting.id}`)?.status).toBe('pending');
    expect(alertStoreOf(wd.store).get(`app_state/app/${stopped.id}`)?.status).toBe('firing');

    await control('checks.url_checks.fail', resting.urlIds[0], 'http_503');
    await control('checks.url_checks.fail', stopped.urlIds[0], 'http_502');
    await wd.runOnce(['urls']);
    const held = (urlId: number) => decisionOf(wd, `url_checks/url/${urlId}`);
    expect(held(resting.urlIds[0]!)).toEqual({ decision: 'inhibited', heldBy: `maintenance/app/${resting.id}` });
    expect(held(stopped.urlIds[0]!)).toEqual({ decision: 'inhibited', heldBy: `app_state/app/${stopped.id}` });

    // Out of maintenance, the URL that still fails is told.
    await control('checks.maintenance.set', resting.id, false);
    await wd.runOnce(['maintenance']);
    await wd.deliverDue();
    expect(held(resting.urlIds[0]!)?.decision).toBe('deliver');
    expect(held(stopped.urlIds[0]!)?.decision).toBe('inhibited');
  });
});
