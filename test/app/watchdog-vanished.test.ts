/**
 * A vanished record is closed in words that say so, against the simulator: an app deleted, a
 * project disabled. Its alerts resolve as "app deleted" / "project disabled" (looked up with
 * include_deleted, only for the apps of the alerts that vanished), never as if the problem were
 * fixed; and the disappearance of a production app is itself told, once.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { MAX_LOOKUPS } from '../../src/collectors/vanished-records.js';
import { engineConfig, engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

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

/**
 * A record the token no longer sees has not vanished: a role that loses production (a reload with
 * another token, a role changed on the service) or a namespace the token no longer reaches. Deleted
 * and disabled apps are listed with include_deleted (reference §4), so an app not listed even there
 * is hidden from the token: its alerts are held and say why, never resolved as if the problem were
 * over, and the token's new rights bring them back as they were.
 */
describe('a record the token no longer sees', () => {
  const NO_PROD = 'token-without-production';
  const ACME_ONLY = 'token-of-acme-alone';
  const h = engineHarness({
    apps: 40,
    tokens: [
      { token: NO_PROD, namespaces: '*', permissions: '*', readEnvironments: ['staging', 'development'] },
      { token: ACME_ONLY, namespaces: ['acme'], permissions: '*' },
    ],
  });

  /** Apps of `env` with a URL, each certificate expired: the apps and their alerts' fingerprints. */
  function expired(env: 'production' | 'staging', where: (nsId: number) => boolean = () => true) {
    const { control } = h.sim;
    const apps = [...control.state.apps.values()].filter(
      (a) => a.envType === env && a.urlIds.length > 0 && where(a.nsId),
    );
    for (const app of apps) control.checks.certificates.expire(app.urlIds[0]!, { inDays: -2 });
    return apps.map((app) => ({ app, fingerprint: `certificates/url/${app.urlIds[0]}` }));
  }
  const held = (wd: Watchdog, fingerprint: string) => alertStoreOf(wd.store).get(fingerprint)?.details.held;
  /** Rewrites an open alert's stored details, as another version of the daemon would have left them. */
  const rewrite = (
    wd: Watchdog,
    fingerprint: string,
    details: (d: Record<string, string>) => Record<string, string>,
  ) => {
    const alerts = alertStoreOf(wd.store);
    const row = alerts.get(fingerprint)!;
    wd.store.transaction(() => alerts.updateOpen({ ...row, details: details(row.details) }));
  };
  /**
   * More hidden production apps than a cycle looks up, a first cycle with the token that no longer
   * sees them: the alerts of the apps it looked up, held as hidden, and every hidden alert.
   */
  async function heldHidden(wd: Watchdog) {
    const hidden = expired('production');
    expect(hidden.length).toBeGreaterThan(MAX_LOOKUPS);
    await wd.runOnce(['urls']);
    await wd.reload(engineConfig(h.sim, h.dir, '', NO_PROD));
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    const lookedUp = hidden.filter(({ fingerprint }) => held(wd, fingerprint)?.includes('not listed to this token'));
    expect(lookedUp).toHaveLength(MAX_LOOKUPS);
    return { hidden, lookedUp };
  }
  /** How many hidden alerts still wait for a first lookup after the next cycle: apps already known hidden wait last. */
  const waitingAfterTwoCycles = (hidden: readonly unknown[]) => Math.max(0, hidden.length - 2 * MAX_LOOKUPS);
  const waiting = (wd: Watchdog, hidden: readonly { fingerprint: string }[]) =>
    hidden.filter(({ fingerprint }) => held(wd, fingerprint)?.startsWith('gone from the read'));
  const resolved = (wd: Watchdog) => eventsOf(wd, 'certificates/').filter((e) => e.kind === 'resolved');

  it('production hidden by a new token: held, saying why, then back as it was with the old token', async () => {
    const { app, fingerprint } = expired('production')[0]!;
    const wd = h.watchdog();
    await wd.runOnce(['urls']);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

    await wd.reload(engineConfig(h.sim, h.dir, '', NO_PROD));
    h.clock.advance(15 * MINUTE);
    expect((await wd.runOnce(['urls'])).complete).toBe(true);
    expect(resolved(wd)).toEqual([]);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');
    expect(held(wd, fingerprint)).toBe(
      `app ${app.name} is not listed to this token, not even with include_deleted: its role may no longer see it; held, not resolved`,
    );
    expect(notices(wd)).toEqual([]);

    await wd.reload(engineConfig(h.sim, h.dir, ''));
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(held(wd, fingerprint)).toBeUndefined();
    const kinds = eventsOf(wd, fingerprint).filter((e) => e.fingerprint === fingerprint);
    expect(kinds.map((e) => e.kind)).toEqual(['firing']);
  });

  it('a namespace the token no longer reaches: its alerts held, the others judged as usual', async () => {
    const acme = [...h.sim.control.state.namespaces.values()].find((n) => n.code === 'acme')!.id;
    const [elsewhere] = expired('staging', (ns) => ns !== acme);
    const wd = h.watchdog();
    await wd.runOnce(['urls']);
    expect(alertStoreOf(wd.store).get(elsewhere!.fingerprint)?.status).toBe('firing');

    await wd.reload(engineConfig(h.sim, h.dir, '', ACME_ONLY));
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(resolved(wd)).toEqual([]);
    expect(held(wd, elsewhere!.fingerprint)).toMatch(
      /^the token no longer reaches namespace \S+ \(namespace_not_found\), where app .+ is; held, not resolved$/,
    );
  });

  it('more hidden apps than a cycle looks up: none resolves, each is looked up in a later cycle', async () => {
    const hidden = expired('production');
    expect(hidden.length).toBeGreaterThan(MAX_LOOKUPS);
    const wd = h.watchdog();
    await wd.runOnce(['urls']);
    await wd.reload(engineConfig(h.sim, h.dir, '', NO_PROD));
    const notes = () => hidden.map(({ fingerprint }) => held(wd, fingerprint));
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(notes().filter((n) => n?.includes('not listed to this token'))).toHaveLength(MAX_LOOKUPS);
    expect(notes().filter((n) => n?.startsWith('gone from the read'))).toHaveLength(hidden.length - MAX_LOOKUPS);
    for (let cycle = 0; cycle * MAX_LOOKUPS < hidden.length; cycle++) {
      h.clock.advance(15 * MINUTE);
      await wd.runOnce(['urls']);
    }
    expect(notes().every((n) => n?.includes('not listed to this token'))).toBe(true);
    expect(resolved(wd)).toEqual([]);
  });

  it('an alert held for a hidden app is known by its held reason, not by the words of its note', async () => {
    const wd = h.watchdog();
    const { hidden, lookedUp } = await heldHidden(wd);
    expect(lookedUp.map(({ fingerprint }) => alertStoreOf(wd.store).get(fingerprint)?.details.held_reason)).toEqual(
      lookedUp.map(() => 'unseen'),
    );
    // A later version words the note otherwise: the apps are still known hidden, and looked up last.
    const REWORDED = 'hidden from this token; held, not resolved';
    for (const { fingerprint } of lookedUp) rewrite(wd, fingerprint, (d) => ({ ...d, held: REWORDED }));
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(waiting(wd, hidden)).toHaveLength(waitingAfterTwoCycles(hidden));
    const kept = lookedUp.filter(({ fingerprint }) => held(wd, fingerprint) === REWORDED);
    // The others took the cycle's lookups first; these keep their note until their turn comes.
    expect(kept).toHaveLength(Math.min(MAX_LOOKUPS, hidden.length - MAX_LOOKUPS));
    expect(resolved(wd)).toEqual([]);
  });

  it('an alert held for a hidden app by an older version, its note alone, is still known hidden', async () => {
    const wd = h.watchdog();
    const { hidden, lookedUp } = await heldHidden(wd);
    // As a version before the held reason left them: the note, no reason.
    for (const { fingerprint } of lookedUp) rewrite(wd, fingerprint, ({ held_reason: _, ...d }) => d);
    h.clock.advance(15 * MINUTE);
    await wd.runOnce(['urls']);
    expect(waiting(wd, hidden)).toHaveLength(waitingAfterTwoCycles(hidden));
    // Held again, each now carries the reason: the next versions need not read its words.
    for (const { fingerprint } of lookedUp) {
      const details = alertStoreOf(wd.store).get(fingerprint)?.details;
      expect(details?.held).toMatch(/is not listed to this token/);
      expect(details?.held_reason).toBe('unseen');
    }
    expect(resolved(wd)).toEqual([]);
  });
});
