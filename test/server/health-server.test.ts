import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { Secret } from '../../src/lib/secret.js';
import { slackSignature } from '../../src/interactions/slack-signature.js';
import { silentLogger } from '../../src/lib/logger.js';
import { Metrics } from '../../src/lib/metrics.js';
import { startHttpProber } from '../helpers/http-prober.js';
import { LogCapture } from '../notify/notify-fixture.js';
import { startHealthServer, type HealthServer } from '../../src/server/health-server.js';
import { parseListen } from '../../src/config/parse-listen.js';
import type { ReadinessCheck } from '../../src/server/readiness-check.js';

describe('parseListen', () => {
  it.each([
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
    [':9464', { host: '0.0.0.0', port: 9464 }],
    ['localhost:0', { host: 'localhost', port: 0 }],
  ])('%s', (listen, expected) => {
    expect(parseListen(listen)).toEqual(expected);
  });

  it.each(['9464', 'host:', 'host:99999', 'a:b:c'])('refuses %s', (listen) => {
    expect(() => parseListen(listen)).toThrow(/listen/);
  });
});

describe('health server', () => {
  let server: HealthServer | undefined;
  afterEach(async () => server?.close());

  async function start(state: { alive: boolean; checks: ReadinessCheck[] }) {
    const metrics = new Metrics({ processMetrics: false });
    metrics.cycles.inc({ source: 'runs', outcome: 'ok' });
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics,
      logger: silentLogger,
      source: { alive: () => state.alive, readiness: () => state.checks },
    });
    return `http://127.0.0.1:${server.address.port}`;
  }

  it('answers /healthz, /readyz and /metrics from the daemon state', async () => {
    const state = { alive: true, checks: [{ check: 'job:runs', ok: true, detail: 'completed 20s ago' }] };
    const base = await start(state);

    let res = await request(`${base}/healthz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ status: 'ok' });

    res = await request(`${base}/readyz`);
    expect(res.statusCode).toBe(200);

    // The front door answers from what the main thread publishes: readiness judged again within a
    // second or two while /readyz is asked, liveness within a beat.
    state.checks.push({ check: 'state', ok: false, detail: 'state store not writable' });
    await vi.waitFor(
      async () => {
        const readyz = await request(`${base}/readyz`);
        expect(readyz.statusCode).toBe(503);
        expect(await readyz.body.json()).toMatchObject({
          status: 'not ready',
          checks: expect.arrayContaining([expect.objectContaining({ ok: false })]),
        });
      },
      { timeout: 10_000, interval: 100 },
    );

    state.alive = false;
    await vi.waitFor(
      async () => {
        const healthz = await request(`${base}/healthz`);
        await healthz.body.dump();
        expect(healthz.statusCode).toBe(503);
      },
      { timeout: 10_000 },
    );

    res = await request(`${base}/metrics`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.text()).toContain('deploy_watchdog_cycles_total{source="runs",outcome="ok"} 1');

    res = await request(`${base}/nope`);
    expect(res.statusCode).toBe(404);
    await res.body.dump();
  });

  it("says the role the readiness judgement left: a judgement that found the leader's term over answers as a follower", async () => {
    // What a leader woken from a pause (SIGSTOP) past its lease meets: the readiness judgement's
    // write is refused, the term is over, and the same answer must not call it the leader.
    let role: 'leader' | 'follower' = 'leader';
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics: new Metrics({ processMetrics: false }),
      logger: silentLogger,
      source: {
        alive: () => true,
        role: () => ({ role, epoch: 1, reached: true, detail: role === 'leader' ? 'leading (epoch 1)' : 'following' }),
        readiness: () => {
          role = 'follower';
          return [{ check: 'state', ok: false, detail: 'not written: this replica no longer leads' }];
        },
      },
    });
    const res = await request(`http://127.0.0.1:${server.address.port}/readyz`);
    expect(res.statusCode).toBe(503);
    expect(await res.body.json()).toMatchObject({ status: 'not ready', role: 'follower', epoch: 1 });
  });

  it("verifies Slack's posts to /slack/interactions in its own thread, answers them and hands the payload over; 404 where no channel takes them", async () => {
    const SECRET = 'front-door-SECRET-signing-0123';
    const secrets: Secret[] = [];
    const taken: [unknown, string][] = [];
    const log = new LogCapture();
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics: new Metrics({ processMetrics: false }),
      logger: log.logger,
      source: { alive: () => true, readiness: () => [] },
      console: (_req, res) => {
        res.writeHead(200).end('console');
        return true;
      },
      interactions: () => ({ secrets, take: (payload, secret) => taken.push([payload, secret.reveal()]) }),
    });
    const url = `http://127.0.0.1:${server.address.port}/slack/interactions`;
    const payload = { type: 'block_actions', user: { id: 'U0ALICE' } };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(Math.floor(Date.now() / 1000));
    const post = async (signature: string) => {
      const res = await request(url, {
        method: 'POST',
        headers: { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature },
        body,
      });
      return { status: res.statusCode, text: await res.body.text() };
    };
    const signature = slackSignature(SECRET, timestamp, body);

    expect(await post(signature)).toEqual({ status: 404, text: JSON.stringify({ error: 'not found' }) });
    secrets.push(new Secret(SECRET));
    // Published within a beat: a wrong signature is then refused, no longer not found.
    await vi.waitFor(
      async () =>
        expect(await post(slackSignature('another-secret-0000', timestamp, body))).toMatchObject({ status: 401 }),
      { timeout: 10_000 },
    );
    expect(await post(signature)).toEqual({ status: 200, text: '' });
    expect(await post(signature)).toEqual({ status: 401, text: JSON.stringify({ error: 'replayed' }) });
    await vi.waitFor(() => expect(taken).toEqual([[payload, SECRET]]));
    expect(log.text()).toContain('Slack interaction refused');
    expect(log.text()).not.toContain('SECRET');

    // A stranger's flood of forged posts is one line, not one a post: anyone may post here.
    const forged = slackSignature('another-secret-0000', timestamp, body);
    for (let i = 0; i < 100; i++) expect((await post(forged)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const forgedLines = log
      .text()
      .split('\n')
      .filter((line) => line.includes('Slack interaction refused') && !line.includes('replay'));
    expect(forgedLines).toHaveLength(1);
  });
});

describe('slow clients', () => {
  let server: HealthServer | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await server?.close();
  });

  async function start(limits: Parameters<typeof startHealthServer>[0]['limits']) {
    server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics: new Metrics({ processMetrics: false }),
      logger: silentLogger,
      source: { alive: () => true, readiness: () => [] },
      limits,
    });
    return server.address.port;
  }

  /** The start of a request whose headers never end. */
  const HALF_HEADERS = 'POST /slack/interactions HTTP/1.1\r\nHost: x\r\n';

  /**
   * A slowloris: connects from `from` (another loopback address) and sends the start of a
   * request (`begin`, default half its headers), then nothing more. `closed` resolves with how
   * long after its connect the connection was closed.
   */
  async function slowClient(port: number, from: string, begin = HALF_HEADERS): Promise<{ closed: Promise<number> }> {
    const socket = connect({ host: '127.0.0.1', port, localAddress: from });
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.resume(); // read what the server says (a 408), so its close reaches us
    // Closed or reset: a refused connection whose half request already arrived is reset, and
    // `once` would reject on that error rather than see the close.
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - connectedAt)));
    await once(socket, 'connect');
    const connectedAt = Date.now();
    socket.write(begin);
    return { closed };
  }

  it('closes the connections a client holds past its share, and probes from elsewhere are answered', async () => {
    const port = await start({ maxConnectionsPerClient: 4 });
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await slowClient(port, '127.0.0.2'));
    const extra = await slowClient(port, '127.0.0.2');
    await extra.closed; // refused at once: its fifth
    const res = await request(`http://127.0.0.1:${port}/healthz`);
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  it('closes a connection whose headers do not arrive in time', async () => {
    // One second, checked every second: the client is gone within a few, whatever the load.
    const port = await start({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_000, checkIntervalMs: 1_000 });
    const slow = await slowClient(port, '127.0.0.3');
    await slow.closed;
    const res = await request(`http://127.0.0.1:${port}/healthz`);
    expect(res.statusCode).toBe(200);
    await res.body.text();
  });

  // The slowloris: more connections than the listener takes (512), from more addresses than
  // any per-client share stops (24 of 25 each), their headers or their body never ending.
  it.each([
    ['their headers', HALF_HEADERS],
    // The console's: the front door reads a body whole before it relays it.
    ['their body', 'POST /silences HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\ncomment='],
  ])(
    'answers /healthz while 600 connections from 24 addresses send %s slowly, and closes every one in time',
    { timeout: 120_000 },
    async (_what, begin) => {
      const timeoutMs = 8_000;
      const port = await start({ headersTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, checkIntervalMs: 1_000 });
      const slow: { closed: Promise<number> }[] = [];
      for (let a = 0; a < 24; a++) {
        const from = `127.0.0.${10 + a}`;
        slow.push(...(await Promise.all(Array.from({ length: 25 }, () => slowClient(port, from, begin)))));
      }
      const closedBefore = new Set<number>();
      slow.forEach((s, i) => void s.closed.then(() => closedBefore.add(i)));
      // Room was made: the connections past the 512 closed the ones that waited longest.
      await vi.waitFor(() => expect(closedBefore.size).toBeGreaterThanOrEqual(600 - 512), { timeout: 5_000 });

      // The listener full of slow clients, probes from a thread of their own (this one holds the
      // 600 connections): each takes a place, and is answered.
      const prober = await startHttpProber(port, ['/healthz'], { everyMs: 50, timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const probes = await prober.done();
      expect(probes.length).toBeGreaterThanOrEqual(3);
      expect(probes.map((p) => p.status)).toEqual(probes.map(() => 200));
      // A listener that took it at all answers in milliseconds; a probe queued behind the slow
      // clients would wait out their 8 s timeout. 3 s leaves a loaded machine room between the two.
      expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(3_000);
      expect(closedBefore.size).toBeLessThan(600);

      // Every other is closed by the timeouts: within the request timeout, the check's interval
      // and a margin for a loaded machine; never left open.
      const lived = await Promise.all(slow.map((s) => s.closed));
      expect(Math.max(...lived)).toBeLessThan(timeoutMs + 2 * 1_000 + 5_000);
      expect(lived.filter((ms) => ms >= timeoutMs - 1_000).length).toBeGreaterThan(0);
    },
  );
});
