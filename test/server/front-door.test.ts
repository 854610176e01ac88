/**
 * The front door (src/server/front-door-worker.ts): the listener on a thread of its own answers
 * while the main thread is blocked, in `Atomics.wait` on a PostgreSQL that hangs (a TCP proxy that
 * stops forwarding): `/healthz` at once, `/metrics` with the last exposition published. Past its
 * bound without a heartbeat, `/healthz` fails and says why, and recovers once the main thread
 * turns again. What it relays (the console, Slack's posts) reaches the handlers with the client's
 * real address, never the relay's nor one a client claims, through a socket no other user reaches.
 *
 * The probes run on a thread of their own too: the test's own thread is the one blocked.
 */
import fs from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request as httpRequest } from 'node:http';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { silentLogger } from '../../src/lib/logger.js';
import { RELAY_HEADER } from '../../src/server/front-door-protocol.js';
import { startHealthServer, type HealthServer } from '../../src/server/health-server.js';
import { Metrics } from '../../src/server/metrics.js';
import { openState } from '../../src/state/open-state.js';
import { testCluster } from '../helpers/state-backends.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** The slowest `/healthz` answer allowed while the main thread is blocked (the figure). */
const PROBE_BOUND_MS = 1_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One answer a probe got. */
interface Probe {
  path: string;
  status: number;
  at: number;
  ms: number;
  body: string;
}

/**
 * Asks `paths` of the listener in turn, each on a new connection (as the kubelet does), every
 * 100ms from a thread of its own until `stop`, then posts what it got. Says `probing` after its
 * first round.
 */
const PROBER = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { port, paths, stop } = workerData;
const got = [];
const ask = (path) => new Promise((resolve) => {
  const at = Date.now();
  const req = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (body += c));
    res.on('end', () => resolve({ path, status: res.statusCode, at, ms: Date.now() - at, body }));
  });
  req.on('error', (err) => resolve({ path, status: 0, at, ms: Date.now() - at, body: err.message }));
});
(async () => {
  let first = true;
  while (Atomics.load(stop, 0) === 0) {
    for (const path of paths) got.push(await ask(path));
    if (first) parentPort.postMessage('probing');
    first = false;
    await new Promise((r) => setTimeout(r, 100));
  }
  parentPort.postMessage(got);
})();
`;

/** Starts a prober; `done()` stops it and resolves with what it got. */
async function startProber(port: number, paths: string[]): Promise<{ done(): Promise<Probe[]> }> {
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(PROBER, { eval: true, workerData: { port, paths, stop } });
  cleanups.push(() => worker.terminate().then(() => undefined));
  const messages: unknown[] = [];
  let heard: () => void = () => undefined;
  worker.on('message', (m) => {
    messages.push(m);
    heard();
  });
  const next = () =>
    new Promise<unknown>((resolve) => {
      if (messages.length > 0) resolve(messages.shift());
      else heard = () => resolve(messages.shift());
    });
  expect(await next()).toBe('probing');
  return {
    done: async () => {
      Atomics.store(stop, 0, 1);
      return (await next()) as Probe[];
    },
  };
}

/** Blocks this thread for `ms` in `Atomics.wait`, as a statement's wait does. */
function blockFor(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

async function start(options: Partial<Parameters<typeof startHealthServer>[0]> = {}): Promise<HealthServer> {
  const server = await startHealthServer({
    listen: '127.0.0.1:0',
    metrics: new Metrics({ processMetrics: false }),
    logger: silentLogger,
    source: { alive: () => true, readiness: () => [] },
    ...options,
  });
  cleanups.push(() => server.close());
  return server;
}

describe('the front door', () => {
  it('answers /healthz at once, and /metrics with the last exposition, while a statement on a hanging PostgreSQL blocks the main thread', async () => {
    const cluster = testCluster();
    const database = cluster.createDatabase();
    cleanups.push(() => cluster.dropDatabase(database));
    const proxy = await startTcpProxy(cluster.port);
    cleanups.push(() => proxy.close());
    const store = openState({
      url: new Secret(proxy.via(cluster.url(database))),
      connect_timeout: 1_000,
      statement_timeout: 1_000,
      retention: 86_400_000,
      leader: { lease: 10_000 },
    });
    cleanups.push(() => store.close());
    store.transaction(() => store.setMeta('probe', 'before'));

    const metrics = new Metrics({ processMetrics: false });
    metrics.leader.set(1);
    const server = await start({ metrics, stallAfterMs: 60_000 });
    await server.publish();
    const prober = await startProber(server.address.port, ['/healthz', '/metrics']);

    await proxy.hang();
    // Changed, and never rendered: the main thread blocks before its next turn.
    metrics.leader.set(7);
    const blockedAt = Date.now();
    expect(() => store.getMeta('probe')).toThrow(/PostgreSQL/);
    const blockedMs = Date.now() - blockedAt;
    const probes = (await prober.done()).filter((p) => p.at >= blockedAt && p.at + p.ms <= blockedAt + blockedMs);
    await proxy.restore();

    const healthz = probes.filter((p) => p.path === '/healthz');
    const slowest = Math.max(...healthz.map((p) => p.ms));
    console.log(
      `main thread blocked ${blockedMs}ms; ${healthz.length} /healthz answered meanwhile, slowest ${slowest}ms`,
    );
    // The statement waited its whole budget (connect 1s, statement 1s, 2s for the server's answer).
    expect(blockedMs).toBeGreaterThanOrEqual(3_000);
    expect(healthz.length).toBeGreaterThanOrEqual(5);
    expect(healthz.map((p) => [p.status, p.body])).toEqual(healthz.map(() => [200, '{"status":"ok"}']));
    expect(slowest).toBeLessThan(PROBE_BOUND_MS);
    const exposed = probes.filter((p) => p.path === '/metrics');
    expect(exposed.length).toBeGreaterThanOrEqual(1);
    for (const p of exposed) {
      expect(p.status).toBe(200);
      expect(p.body).toMatch(/^deploy_watchdog_leader 1$/m);
    }
    // And once the main thread turns again, the exposition is its new one.
    await server.publish();
    const res = await fetch(`http://127.0.0.1:${server.address.port}/metrics`);
    expect(await res.text()).toMatch(/^deploy_watchdog_leader 7$/m);
  });

  it('fails /healthz, saying why, once the main thread has not turned for longer than its bound, and recovers after', async () => {
    const server = await start({ stallAfterMs: 1_000 });
    const prober = await startProber(server.address.port, ['/healthz', '/readyz']);
    blockFor(3_000);
    const probes = await prober.done();
    const stalled = probes.filter((p) => p.status === 503);
    expect(stalled.length).toBeGreaterThanOrEqual(1);
    for (const p of stalled) {
      expect(JSON.parse(p.body)).toMatchObject(
        p.path === '/healthz'
          ? {
              status: 'stalled',
              detail: expect.stringMatching(/main thread has not turned for [\d.]+s \(allowed 1\.0s/),
            }
          : { status: 'not ready', checks: [{ check: 'main_thread', ok: false }] },
      );
    }
    expect(stalled.map((p) => p.path)).toContain('/healthz');
    // The main thread turns again: its next heartbeat makes /healthz well at once.
    await vi.waitFor(
      async () => expect((await fetch(`http://127.0.0.1:${server.address.port}/healthz`)).status).toBe(200),
      { timeout: 5_000 },
    );
  });

  it("relays the console with the client's real address, never the relay's nor one the client claims", async () => {
    const seen: { remote: string | undefined; relayHeader: unknown; body: string }[] = [];
    const before = new Set(fs.readdirSync(os.tmpdir()));
    const server = await start({
      console: (req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (c: string) => (body += c));
        req.on('end', () => {
          seen.push({ remote: req.socket.remoteAddress, relayHeader: req.headers[RELAY_HEADER], body });
          res.writeHead(200, { 'set-cookie': ['a=1', 'b=2'] }).end('console');
        });
        return true;
      },
    });
    const answer = await new Promise<{ status: number; cookies: string[] | undefined; body: string }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: server.address.port,
            localAddress: '127.0.0.3',
            method: 'POST',
            path: '/silences',
            headers: { [RELAY_HEADER]: 'forged 1 10.9.8.7', 'content-type': 'application/x-www-form-urlencoded' },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, cookies: res.headers['set-cookie'], body }));
          },
        );
        req.on('error', reject);
        req.end('comment=why');
      },
    );
    expect(answer).toEqual({ status: 200, cookies: ['a=1', 'b=2'], body: 'console' });
    expect(seen).toEqual([{ remote: '127.0.0.3', relayHeader: undefined, body: 'comment=why' }]);

    // The main thread's own listener is a socket in a directory of this user's alone, and believes
    // no request without the front door's token.
    const dirs = fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith('dw-listener-') && !before.has(d));
    expect(dirs).toHaveLength(1);
    const dir = path.join(os.tmpdir(), dirs[0]!);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const direct = await new Promise<string>((resolve, reject) => {
      const socket = connect(path.join(dir, 'main.sock'));
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.end(`GET / HTTP/1.1\r\nHost: x\r\n${RELAY_HEADER}: forged 1 10.9.8.7\r\nConnection: close\r\n\r\n`);
    });
    expect(direct).toMatch(/^HTTP\/1\.1 403/);
    expect(seen).toHaveLength(1);
    await server.close();
    expect(fs.existsSync(dir)).toBe(false);
  });
});
