/**
 * Remediation through the real daemon: the Watchdog's own runs cycle (collector, detectors,
 * lifecycle, outbox) calls the remediation seam inside its transaction; the remediator then sends,
 * follows and reports, and the outcome is delivered to the alert's channel.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { listAttempts, listAudit } from '../../src/remediation/remediation-store.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';
import { installationOf } from './remediation-fixture.js';

const HOUR = 60 * MINUTE;
const REASON = 'e2e: the health check timed out';
const REMEDIATION = `
remediation:
  enabled: true
  dry_run: false
  policies:
    - { name: retry-e2e, action: runs.retry, match: { environment_type: [staging, development] }, match_re: { reason: "e2e: .*" }, max_attempts: 1 }
`;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('remediation in the daemon', () => {
  it('a failed staging run: retried once by the real cycle, followed, reported, never again', async () => {
    const { sim, clock } = await manualSim({ apps: 20, seed: 3 });
    const tmp = tempDir();
    const wd: Watchdog = openWatchdog(engineConfig(sim, tmp.dir, REMEDIATION), clock);
    cleanup.push(async () => {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    });

    const appId = stagingApp(sim);
    const run = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', reason: REASON });
    const key = `dw-${installationOf(wd.store)}.1-retry-e2e-run${run.id}-a1`;

    await wd.runOnce(['runs']);
    // Decided and recorded inside the cycle's transaction; nothing sent yet.
    expect(listAttempts(wd.store)).toMatchObject([{ key, status: 'planned' }]);
    expect(retries(sim)).toEqual([]);

    await wd.remediateOnce();
    expect(retries(sim)).toEqual([{ key, status: 200 }]);

    clock.advance(10 * MINUTE);
    await wd.remediateOnce();
    expect(listAttempts(wd.store)).toMatchObject([{ outcome: 'succeeded' }]);

    // The next cycles see the run done: the alert resolves; nothing is retried again.
    await wd.runOnce(['runs']);
    await wd.remediateOnce();
    clock.advance(HOUR);
    await wd.runOnce(['runs']);
    await wd.remediateOnce();
    expect(retries(sim)).toHaveLength(1);
    const events = wd.store.db
      .prepare(`SELECT kind FROM events WHERE fingerprint = ? ORDER BY id`)
      .all(`failed_runs/run/${run.id}`) as { kind: string }[];
    expect(events.map((e) => e.kind)).toEqual(['firing', 'resolved']);

    // The outcome went through the outbox to the alert's channel.
    await wd.deliverDue();
    const notice = wd.store.db
      .prepare(
        `SELECT o.channel, o.status, COALESCE(b.body, o.payload) AS payload FROM outbox AS o LEFT JOIN outbox_bodies AS b ON b.body_id = o.body_id
         WHERE o.source = 'notice' AND o.kind = 'remediation'`,
      )
      .all() as { channel: string; status: string; payload: string }[];
    expect(notice).toHaveLength(1);
    expect(notice[0]).toMatchObject({ channel: 'console', status: 'sent' });
    expect(JSON.parse(notice[0]!.payload)).toMatchObject({ title: 'Retried automatically: succeeded' });
    expect(listAudit(wd.store).map((a) => a.decision)).toEqual(['acted', 'answered', 'outcome']);
  });

  it.each([
    ['the default', '', 30_000],
    ['remediation.poll_interval: 5s', '  poll_interval: 5s\n', 5_000],
  ])('follows a started run every poll interval: %s', async (_what, extra, pollMs) => {
    const { sim, clock } = await manualSim({ apps: 20, seed: 3 });
    const tmp = tempDir();
    const config = engineConfig(sim, tmp.dir, REMEDIATION.replace('  dry_run: false\n', `  dry_run: false\n${extra}`));
    const wd: Watchdog = openWatchdog(config, clock);
    cleanup.push(async () => {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    });
    sim.control.addRun({
      appId: stagingApp(sim),
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: REASON,
    });
    await wd.runOnce(['runs']);
    expect((await wd.remediateOnce())!.sent).toBe(1);
    // The first read follows the send at once; the next waits one poll interval.
    expect((await wd.remediateOnce())!.polled).toBe(1);

    clock.advance(pollMs - 1);
    expect((await wd.remediateOnce())!.polled).toBe(0);
    clock.advance(1);
    expect((await wd.remediateOnce())!.polled).toBe(1);
  });

  it('started daemon: the cycle wakes the remediation loop, which sends and follows on its own', async () => {
    const { sim, clock } = await manualSim({ apps: 20, seed: 3 });
    const tmp = tempDir();
    const wd: Watchdog = openWatchdog(engineConfig(sim, tmp.dir, REMEDIATION), clock, {});
    cleanup.push(async () => {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    });
    const run = sim.control.addRun({
      appId: stagingApp(sim),
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: REASON,
    });

    // start() runs a first cycle of every job; the runs cycle plans the retry and wakes the loop.
    await wd.start();
    await vi.waitFor(() => expect(listAttempts(wd.store)).toMatchObject([{ status: 'following', answer: 'started' }]), {
      timeout: 10_000,
      interval: 20,
    });
    expect(retries(sim)).toEqual([{ key: `dw-${installationOf(wd.store)}.1-retry-e2e-run${run.id}-a1`, status: 200 }]);

    // The loop sleeps on the shared clock until the next poll is due. Time moves on each probe,
    // not once: under load the loop may register its sleep only after a single advance, and a
    // ManualClock sleeper registered after the advance would never wake.
    await vi.waitFor(
      () => {
        clock.advance(MINUTE);
        expect(listAttempts(wd.store)).toMatchObject([{ outcome: 'succeeded' }]);
      },
      { timeout: 10_000, interval: 20 },
    );
  });
});

function stagingApp(sim: RunningSimulator): number {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const app = [...state.apps.values()].find(
    (a) => a.envType === 'staging' && !busy.has(a.id) && !a.upgrade && a.state === 'running',
  );
  if (!app) throw new Error('no free staging app');
  return app.id;
}

function retries(sim: RunningSimulator): { key: string | undefined; status: number }[] {
  return sim.control
    .requests()
    .filter((r) => r.fn === 'runs.retry')
    .map((r) => ({ key: r.idempotencyKey, status: r.status }));
}
