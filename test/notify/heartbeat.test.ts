import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Heartbeat } from '../../src/notify/heartbeat.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { finding, Harness, LogCapture, MINUTE, T0, slackTo } from './notify-fixture.js';

let server: Server;
let base: string;
let hits: string[];
let status: number;
const token = randomUUID();

beforeEach(async () => {
  hits = [];
  status = 200;
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(status).end('OK');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('heartbeat', () => {
  it('pings after healthy cycles, at most once per `every`', async () => {
    const clock = new ManualClock(T0);
    const beat = new Heartbeat({ settings: { url: new Secret(`${base}/ping/${token}`), every: 5 * MINUTE }, clock });
    expect(beat.beat()).toBe('pinged');
    await beat.settle();
    expect(hits).toEqual([`GET /ping/${token}`]);
    clock.advance(4 * MINUTE);
    expect(beat.beat()).toBe('not_due');
    clock.advance(MINUTE);
    expect(beat.beat()).toBe('pinged');
    // A cycle ending while the ping is still out does not start a second one.
    expect(beat.beat()).toBe('in_flight');
    await beat.settle();
    expect(hits).toHaveLength(2);
  });

  it('pings on after the clock was stepped back an hour: the receiver does not think us dead for the hour', async () => {
    const clock = new ManualClock(T0);
    const beat = new Heartbeat({ settings: { url: new Secret(`${base}/ping/${token}`), every: 5 * MINUTE }, clock });
    expect(beat.beat()).toBe('pinged');
    await beat.settle();
    clock.stepBack(60 * MINUTE);
    clock.advance(5 * MINUTE);
    expect(beat.beat()).toBe('pinged');
    await beat.settle();
    clock.advance(4 * MINUTE);
    expect(beat.beat()).toBe('not_due');
  });

  it('is wired into the notifier from notify.heartbeat', async () => {
    const h = Harness.open({
      channels: [],
      notify: { heartbeat: { url: new Secret(`${base}/ping/${token}`), every: 5 * MINUTE } },
    });
    try {
      expect(h.notifier.heartbeat()).toBe('pinged');
      await vi.waitFor(() => expect(hits).toEqual([`GET /ping/${token}`]));
    } finally {
      await h.close();
    }
  });

  it.each([
    ['fails (500)', 'fail500', { retried: 1, waiting: 1 }],
    ['refuses the channel itself (404)', 'notFound', { failed: 1, waiting: 1 }],
  ] as const)(
    "holds its ping while the only channel %s, so the dead man's switch tells someone",
    async (_what, mode, report) => {
      const slack = await startWebhookReceiver();
      const h = Harness.open({
        channels: [slackTo('ops', slack.url), { name: 'console', type: 'log' }],
        notify: { heartbeat: { url: new Secret(`${base}/ping/${token}`), every: MINUTE } },
      });
      const log = h.log;
      try {
        slack.setMode(mode);
        h.cycle('runs', [finding('shop')]);
        expect(await h.notifier.deliverDue()).toMatchObject(report);
        // Slack fails with a message waiting; the log channel reaches no one.
        expect(h.notifier.heartbeat()).toBe('held');
        expect(log.text()).toContain('no channel delivers: ops failed their last try with messages waiting');
        expect(hits).toEqual([]);
        slack.setMode('ok');
        h.clock.advance(60 * MINUTE);
        expect(await h.notifier.deliverDue()).toMatchObject({ waiting: 0 });
        expect(h.notifier.heartbeat()).toBe('pinged');
        await vi.waitFor(() => expect(hits).toEqual([`GET /ping/${token}`]));
        expect(log.text()).toContain('heartbeat pings again');
      } finally {
        await h.close();
        await slack.close();
      }
    },
  );

  it('is off without notify.heartbeat', async () => {
    const h = Harness.open({ channels: [] });
    expect(h.notifier.heartbeat()).toBe('off');
    await h.close();
  });

  it.each([
    ['a refused ping', () => `${base}/ping/${token}`, 503, 'heartbeat ping refused'],
    ['an unreachable endpoint', () => `http://127.0.0.1:1/ping/${token}`, 200, 'heartbeat ping failed'],
  ])('logs %s without the URL and never throws', async (_name, url, answer, message) => {
    status = answer;
    const log = new LogCapture();
    const beat = new Heartbeat({
      settings: { url: new Secret(url()), every: MINUTE },
      clock: new ManualClock(T0),
      logger: log.logger,
    });
    expect(beat.beat()).toBe('pinged');
    await beat.settle();
    expect(log.text()).toContain(message);
    expect(log.text()).not.toContain(token);
    expect(log.text()).not.toContain('/ping/');
  });
});
