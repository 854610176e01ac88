/**
 * Branches, end to end against the simulator: the maintenance job raises one branches alert when
 * an app's branch is deleted upstream (set through the simulator's control interface) and resolves
 * it when the branch is back; a production app behind its branch is tracked, never sent as a
 * message, and listed in the daily digest. Read from the `apps.get` the job makes anyway: no other
 * function is called.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { simControl } from '../helpers/simulator.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { engineConfig, engineHarness, eventsOf, MINUTE, openWatchdog, resolutionOf } from './fixtures.js';

const h = engineHarness();
let receiver: WebhookReceiver;
let wd: Watchdog | undefined;

beforeEach(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(async () => {
  await wd?.stop(1_000);
  wd = undefined;
  await receiver.close();
});

/** A Watchdog sending to the Slack stand-in, with the daily digest due at once (00:00 UTC). */
function watchdog(extra = ''): Watchdog {
  const notify = [
    'notify:',
    `  channels: [{ name: ops, type: slack, webhook_url: "${receiver.url}" }]`,
    '  routes: [{ channels: [ops] }]',
    '  digest: { enabled: true, at: "00:00", time_zone: UTC }',
  ].join('\n');
  wd = openWatchdog(engineConfig(h.sim, h.dir, extra, h.sim.adminToken, notify), h.clock);
  return wd;
}

/** A running production app of the seed, its branches upstream and up to date. */
async function productionApp(): Promise<{ id: number; name: string; repository: string }> {
  const app = [...h.sim.control.state.apps.values()].find(
    (a) => a.state === 'running' && a.envType === 'production' && a.repositories.every((r) => !r.deletedUpstream),
  );
  expect(app, 'a running production app').toBeDefined();
  for (const r of app!.repositories) await setRepository(app!.id, { repository: r.repository, behind: false });
  return { id: app!.id, name: app!.name, repository: app!.repositories[0]!.repository };
}

/** Changes a repository over the simulator's control interface, as an out-of-process test would. */
async function setRepository(appId: number, patch: Record<string, unknown>): Promise<void> {
  const answer = await simControl(h.sim, 'checks.branches.setRepository', [appId, patch]);
  expect(answer.status, answer.text).toBe(200);
}

/** What the Slack stand-in received, each payload as its JSON text. */
const received = () => receiver.received.map((p) => JSON.stringify(p));

describe('a branch deleted upstream', () => {
  it('fires one warning while the branch is gone, from apps.get alone, and resolves when it is back', async () => {
    const w = watchdog();
    const app = await productionApp();
    const fp = `branches/deleted/${app.id}/${app.repository}`;
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, fp)).toEqual([]);

    h.clock.advance(MINUTE);
    await setRepository(app.id, { repository: app.repository, deletedUpstream: true });
    h.sim.control.resetRequests();
    expect((await w.runOnce(['maintenance'])).complete).toBe(true);
    expect(new Set(h.sim.control.requests().map((r) => r.fn))).toEqual(new Set(['apps.list', 'apps.get']));
    expect(eventsOf(w, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(w.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'warning',
      labels: { check: 'branches', app: app.name, repository: app.repository, environment_type: 'production' },
    });
    await w.deliverDue();
    expect(received().some((t) => t.includes('was deleted upstream'))).toBe(true);

    h.clock.advance(MINUTE);
    await setRepository(app.id, { repository: app.repository, deletedUpstream: false });
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(w, fp)).toMatch(/^branch \S+ is upstream again$/);
  });

  it('is not looked for with the check off', async () => {
    const w = watchdog('checks: { branches: { enabled: false } }');
    const app = await productionApp();
    await setRepository(app.id, { repository: app.repository, deletedUpstream: true });
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, 'branches/')).toEqual([]);
  });
});

describe('a production app behind its branch', () => {
  it('is tracked and listed in the daily digest, never sent on its own', async () => {
    const w = watchdog();
    const app = await productionApp();
    const fp = `branches/behind/${app.id}/${app.repository}`;
    await setRepository(app.id, { repository: app.repository, behind: true });
    await w.runOnce(['maintenance']);
    expect(alertStoreOf(w.store).get(fp)).toMatchObject({ status: 'firing', severity: 'info' });

    await w.deliverDue();
    const rows = w.store.db.prepare(`SELECT status, decision FROM outbox WHERE fingerprint = ?`).all(fp) as {
      status: string;
      decision: string;
    }[];
    expect(rows).toEqual([{ status: 'suppressed', decision: 'digest_only' }]);
    const digests = received().filter((t) => t.includes('Daily digest'));
    expect(digests).toHaveLength(1);
    expect(digests[0]).toContain(`${app.name} (production) runs ${app.repository} behind its branch`);
    const messages = received().filter((t) => !t.includes('Daily digest'));
    expect(messages.filter((t) => t.includes('behind its branch'))).toEqual([]);
  });
});
