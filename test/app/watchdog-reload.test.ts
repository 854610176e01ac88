/**
 * A reload while Slack hangs: the old runtime's delivery is stopped at once (the send in flight is
 * abandoned, its row left due), so polling resumes without waiting for the send's time limit, and
 * the new runtime delivers the row once Slack answers again. A reload to a server.listen another
 * process holds leaves the listener where it was (or down, when it was off), and the watch going.
 */
import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { freePort } from '../helpers/free-port.js';
import { startWebhookReceiver, type WebhookMode, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { captureLogger, engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from './fixtures.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/**
 * A watchdog of the runs job alone, telling one Slack webhook (a receiver in `mode`) with these
 * `delivery` settings; stopped and cleaned up after the test.
 */
async function withReceiver(mode: WebhookMode, delivery: string, channel = '') {
  const { sim, clock } = await manualSim({ apps: 10, seed: 4 });
  const tmp = tempDir();
  const receiver: WebhookReceiver = await startWebhookReceiver();
  receiver.setMode(mode);
  const notify = [
    'notify:',
    `  channels: [{ name: ops, type: slack, webhook_url: "${receiver.url}"${channel} }]`,
    '  routes: [{ channels: [ops] }]',
    `  delivery: { ${delivery} }`,
    // What is tested is what a reload does to sends; a context read would hold rows on its own.
    '  context: { enabled: false }',
  ].join('\n');
  const jobs =
    'jobs: { runs: "*/1 * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off" }';
  const config = engineConfig(sim, tmp.dir, jobs, sim.adminToken, notify);
  const wd: Watchdog = openWatchdog(config, clock);
  cleanup.push(async () => {
    await wd.stop(0);
    await receiver.close();
    await sim.close();
    tmp.cleanup();
  });
  return { sim, clock, receiver, config, wd };
}

describe('Watchdog.reload', () => {
  it('does not wait for a hanging send: the row stays due and the new runtime delivers it once', async () => {
    const { sim, clock, receiver, config, wd } = await withReceiver(
      'hang',
      'timeout: 15s, interval: 5s',
      ', timeout: 60000',
    );
    const app = [...sim.control.state.apps.values()].find((a) => a.state === 'running')!;
    sim.control.addRun({
      appId: app.id,
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: 'reload test',
    });

    await wd.start();
    const pending = () =>
      wd.store.db.prepare(`SELECT status, attempts FROM outbox WHERE source = 'event'`).all() as {
        status: string;
        attempts: number;
      }[];
    await vi.waitFor(() => expect(pending().length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
    // Moved only once the delivery loop sleeps until its next round: earlier, it would not wake.
    await vi.waitFor(() => expect(clock.nextWakeAt()).toBeLessThanOrEqual(clock.now() + 5_000), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(5_000);
    await vi.waitFor(() => expect(receiver.requests).toBe(1), { timeout: 10_000, interval: 20 });

    // The clock does not move: a reload that waited for the send's time limit would never return.
    await wd.reload(config);
    expect(pending().every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);

    receiver.setMode('ok');
    await vi.waitFor(() => expect(clock.nextWakeAt()).toBeLessThanOrEqual(clock.now() + 5_000), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(5_000);
    await vi.waitFor(() => expect(pending().every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    // Delivered once: the abandoned send was not counted as a failed attempt, nor sent twice.
    expect(receiver.received.map((p) => JSON.stringify(p)).filter((t) => t.includes('reload test'))).toHaveLength(1);
  });

  it('tries what a channel refused again at once after a reload, not at the end of max_backoff', async () => {
    const { sim, clock, receiver, config, wd } = await withReceiver('notFound', 'interval: 5s, max_backoff: 10m');
    const app = [...sim.control.state.apps.values()].find((a) => a.state === 'running')!;
    sim.control.addRun({ appId: app.id, action: 'update', state: 'error', failedStep: 'restart', reason: 'fix test' });
    await wd.start();
    const rows = () =>
      wd.store.db.prepare(`SELECT status, last_error FROM outbox WHERE source = 'event'`).all() as {
        status: string;
        last_error: string | null;
      }[];
    // Refused (a webhook removed): kept, and tried again only after max_backoff.
    await vi.waitFor(
      () => {
        clock.advance(1_000);
        expect(rows().some((r) => r.last_error !== null)).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    const [refused, fixedAt] = [receiver.requests, clock.now()];

    // The webhook fixed and the config reloaded: sent within a delivery interval, not in 10 minutes.
    receiver.setMode('ok');
    await wd.reload(config);
    await vi.waitFor(
      () => {
        clock.advance(5_000);
        expect(rows().every((r) => r.status === 'sent')).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(receiver.requests).toBeGreaterThan(refused);
    expect(clock.now() - fixedAt).toBeLessThan(5 * MINUTE);
  }, 60_000);

  it('stays alive on /healthz while a reload waits for a cycle in flight', async () => {
    const { sim, clock } = await manualSim({ apps: 4, seed: 4 });
    const tmp = tempDir();
    const listen = `127.0.0.1:${await freePort()}`;
    const config = engineConfig(
      sim,
      tmp.dir,
      'jobs: { runs: "*/1 * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off", installers: "off" }',
      sim.adminToken,
      undefined,
      `{ listen: "${listen}" }`,
    );
    const wd: Watchdog = openWatchdog(config, clock);
    cleanup.push(async () => {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    });
    await wd.start();
    const healthz = async () => (await fetch(`http://${listen}/healthz`)).status;
    await vi.waitFor(async () => expect(await healthz()).toBe(200), { timeout: 10_000, interval: 50 });

    // A cycle hangs on the service; the reload stops the old scheduler and waits for it.
    sim.control.setFault('runs.list', { hang: true });
    const hanging = wd.runOnce(['runs']);
    await vi.waitFor(() => expect(sim.control.requests().some((r) => r.fn === 'runs.list')).toBe(true));
    const reloading = wd.reload(config);
    // Sampled over more than a few heartbeats (100 ms each): the front door hears any change by then.
    for (let i = 0; i < 8; i++) {
      expect(await healthz()).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    sim.control.clearFaults();
    clock.advance(MINUTE); // the hanging read times out
    await hanging;
    await reloading;
    expect(await healthz()).toBe(200);
  }, 60_000);

  it('keeps the listener where it was and the jobs running when the new server.listen cannot be bound', async () => {
    const { sim, clock } = await manualSim({ apps: 4, seed: 4 });
    const tmp = tempDir();
    const taken = net.createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const jobs =
      'jobs: { runs: "*/1 * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off", installers: "off" }';
    const on = (listen: string) =>
      engineConfig(sim, tmp.dir, jobs, sim.adminToken, undefined, `{ listen: "${listen}" }`);
    const log = captureLogger('info');
    const first = `127.0.0.1:${await freePort()}`;
    const wd: Watchdog = openWatchdog(on(first), clock, { logger: log.logger });
    cleanup.push(async () => {
      await wd.stop(0);
      taken.close();
      await sim.close();
      tmp.cleanup();
    });
    await wd.start();
    expect(wd.healthAddress).toBeDefined();
    const runsCycles = () => log.lines().filter((l) => l.job === 'runs' && l.msg === 'cycle complete').length;
    await vi.waitFor(() => expect(runsCycles()).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });

    // A move to a taken port: the probes keep their old address.
    const takenListen = `127.0.0.1:${(taken.address() as net.AddressInfo).port}`;
    await wd.reload(on(takenListen));
    expect(`${wd.healthAddress?.host}:${wd.healthAddress?.port}`).toBe(first);
    await vi.waitFor(async () => expect((await fetch(`http://${first}/healthz`)).status).toBe(200), {
      timeout: 10_000,
      interval: 50,
    });
    expect(log.lines()).toContainEqual(
      expect.objectContaining({
        level: 50,
        err: expect.stringContaining(`server.listen ${takenListen}: the address is in use`),
        msg: expect.stringContaining(`its listener could not move: it still listens on ${first}`),
      }),
    );

    // From "off" there is no old address to keep: the listener stays down, and says so.
    await wd.reload(on('off'));
    expect(wd.healthAddress).toBeUndefined();
    await wd.reload(on(takenListen));
    expect(wd.healthAddress).toBeUndefined();
    expect(log.lines()).toContainEqual(
      expect.objectContaining({
        level: 50,
        err: expect.stringContaining(`server.listen ${takenListen}: the address is in use`),
        msg: expect.stringContaining('the configuration is reloaded, but its listener could not start'),
      }),
    );
    // The new runtime's runs job still ticks.
    const before = runsCycles();
    await vi.waitFor(() => expect(clock.nextWakeAt()).toBeLessThanOrEqual(clock.now() + MINUTE), {
      timeout: 10_000,
      interval: 20,
    });
    clock.advance(MINUTE);
    await vi.waitFor(() => expect(runsCycles()).toBeGreaterThan(before), { timeout: 10_000, interval: 20 });
  }, 60_000);
});
