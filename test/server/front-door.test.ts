/**
 * The front door (src/server/front-door-worker.ts): the listener on a thread of its own answers
 * while the main thread is blocked, in `Atomics.wait` on a PostgreSQL that hangs (a TCP proxy that
 * stops forwarding): `/healthz` at once, `/metrics` with the last exposition published. Past its
 * bound without a heartbeat, `/healthz` fails and says why, and recovers once the main thread
 * turns again. What it relays (the console, Slack's posts) reaches the handlers with the client's
 * real address, never the relay's nor one a client claims, through a socket no other user reaches.
 *
 * A reload that changes `server.listen` moves the listener, or stops it; a stop closes it.
 *
 * The probes run on a thread of their own too: the test's own thread is the one blocked.
 */
import fs from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { silentLogger } from '../../src/lib/logger.js';
import { RELAY_HEADER } from '../../src/server/front-door-protocol.js';
import { startHealthServer, type HealthServer } from '../../src/server/health-server.js';
import { Metrics } from '../../src/lib/metrics.js';
import { openState } from '../../src/state/open-state.js';
import { engineConfig, manualSim, openWatchdog, tempDir } from '../app/fixtures.js';
import { freePort } from '../helpers/free-port.js';
import { startHttpProber } from '../helpers/http-prober.js';
import { testCluster } from '../helpers/state-backends.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** The slowest `/healthz` answer allowed while the main thread is blocked (the figure). */
const PROBE_BOUND_MS = 1_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

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

// A listener's thread starts through tsx's loader from the sources: seconds on a loaded machine.
describe('the front door', { timeout: 120_000 }, () => {
  it('answers /healthz at once, and /metrics with the last exposition, while a statement on a hanging PostgreSQL blocks the main thread', async () => {
    const cluster = testCluster();
    const database = cluster.createDatabase();
    cleanups.push(() => cluster.dropDatabase(database));
    const proxy = await startTcpProxy(cluster.port);
    cleanups.push(() => proxy.close());
    const state = (url: string, timeoutMs: number) => ({
      url: new Secret(url),
      connect_timeout: timeoutMs,
      statement_timeout: timeoutMs,
      retention: 86_400_000,
      leader: { lease: 10_000 },
    });
    // The setup is not what is measured, and its first request pays for the worker thread's start
    // too: on a loaded machine that alone passed the 4 s the tight timeouts below allow. So the
    // schema is made first without the proxy, on generous timeouts; then the store under test
    // opens (a read of the schema's version) and writes, retried until one try gets through.
    openState(state(cluster.url(database), 60_000)).close();
    const store = await vi.waitFor(
      () => {
        const opened = openState(state(proxy.via(cluster.url(database)), 1_000));
        try {
          opened.transaction(() => opened.setMeta('probe', 'before'));
          return opened;
        } catch (err) {
          opened.close();
          throw err;
        }
      },
      { timeout: 60_000, interval: 500 },
    );
    cleanups.push(() => store.close());

    const metrics = new Metrics({ processMetrics: false });
    metrics.leader.set(1);
    // The first exposition, whole, is the front door's from its start.
    const server = await start({ metrics, stallAfterMs: 60_000 });
    const prober = await startHttpProber(server.address.port, ['/healthz', '/metrics']);

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
    // And once the main thread turns again, the exposition is its new one (rendered every second).
    await vi.waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${server.address.port}/metrics`);
        expect(await res.text()).toMatch(/^deploy_watchdog_leader 7$/m);
      },
      { timeout: 10_000 },
    );
  });

  it('fails /healthz, saying why, once the main thread has not turned for longer than its bound, and recovers after', async () => {
    const server = await start({ stallAfterMs: 1_000 });
    const prober = await startHttpProber(server.address.port, ['/healthz', '/readyz']);
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

  it('keeps /healthz well through a long synchronous stretch that beats as it makes progress (a long transaction)', async () => {
    // 2 s: twenty times the 100 ms between two beats below, room for a loaded machine.
    const server = await start({ stallAfterMs: 2_000 });
    const prober = await startHttpProber(server.address.port, ['/healthz']);
    // Well past the bound without the event loop turning, beating between waits as a transaction's statements do.
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      blockFor(100);
      server.beat();
    }
    const probes = await prober.done();
    expect(probes.length).toBeGreaterThanOrEqual(1);
    expect(probes.filter((p) => p.status !== 200)).toEqual([]);
  });

  it('answers the first /readyz after a quiet spell from a judgement made for it, and the last one, said so, while the main thread is blocked', async () => {
    let judgements = 0;
    let ok = true;
    const server = await start({
      stallAfterMs: 60_000,
      source: {
        alive: () => true,
        readiness: () => [{ check: 'job:runs', ok, detail: `judgement ${++judgements}` }],
      },
    });
    const readyz = async () => {
      const res = await fetch(`http://127.0.0.1:${server.address.port}/readyz`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    // Nobody asks for longer than a judgement stays fresh (2 s): none is made meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const quiet = judgements;
    ok = false;
    const first = await readyz();
    expect(first).toMatchObject({
      status: 503,
      body: { judgement: 'fresh', checks: [{ check: 'job:runs', ok: false, detail: `judgement ${quiet + 1}` }] },
    });
    // Judged for this request: the last judgement before it is 2.5 s old.
    expect(first.body.judged_ms_ago).toBeLessThan(2_000);

    // Blocked longer than a judgement stays fresh: /readyz answers the last, said so, without
    // waiting past its bound (under the kubelet's default probe timeout of 1 s, on a quiet machine).
    const prober = await startHttpProber(server.address.port, ['/readyz']);
    blockFor(4_000);
    const probes = await prober.done();
    const judged = probes.map((p) => JSON.parse(p.body) as { judgement: string; judged_ms_ago: number });
    expect(judged.map((j) => j.judgement)).toContain('last');
    for (const [i, j] of judged.entries()) {
      expect(probes[i]!.status).toBe(503);
      if (j.judgement === 'last') expect(j.judged_ms_ago).toBeGreaterThan(2_000);
    }
    // The bound: 0.8 s, and generous room for a loaded machine; never the 4 s block.
    expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(2_500);
  });

  it("relays the console with the client's real address, never the relay's nor one the client claims", async () => {
    const seen: { remote: string | undefined; relayHeader: unknown; body: string }[] = [];
    // A temp directory of this test's own, so another test's listeners are not in it.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-front-door-'));
    const previous = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    cleanups.push(() => {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      fs.rmSync(tmp, { recursive: true, force: true });
    });
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
    const dirs = fs.readdirSync(tmp).filter((d) => d.startsWith('dw-listener-'));
    expect(dirs).toHaveLength(1);
    const dir = path.join(tmp, dirs[0]!);
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

describe("the daemon's listener across reloads", { timeout: 120_000 }, () => {
  /** Waits until `/healthz` on `port` is 200: liveness is published at the main thread's next heartbeat. */
  const healthy = (port: number) => vi.waitFor(async () => expect(await healthz(port)).toBe(200), { timeout: 5_000 });

  /**
   * The status of `/healthz` on `port`, or the error's code when nothing answers. On a connection
   * of its own each time: one kept alive from an earlier probe, closed by the listener's stop as the
   * next request went out on it, failed as a reset socket, not a refused connection (a CI run).
   */
  function healthz(port: number): Promise<number | string> {
    return new Promise((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'failed'));
      req.end();
    });
  }

  it('moves to the new address of a reload, stops when a reload turns it off, and closes at stop', async () => {
    const { sim, clock } = await manualSim({ apps: 2, seed: 5 });
    cleanups.push(() => sim.close());
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const [first, second] = [await freePort(), await freePort()];
    const config = (listen: string) =>
      engineConfig(
        sim,
        tmp.dir,
        'jobs: { runs: "0 0 1 1 *", servers: "off", urls: "off", backups: "off", attention: "off", maintenance: "off", installers: "off", jitter: 0s }',
        undefined,
        undefined,
        `{ listen: "${listen}" }`,
      );
    const wd = openWatchdog(config(`127.0.0.1:${first}`), clock);
    cleanups.push(() => wd.stop(1_000).then(() => undefined));
    await wd.start();
    expect(wd.healthAddress).toEqual({ host: '127.0.0.1', port: first });
    await healthy(first);

    await wd.reload(config(`127.0.0.1:${second}`));
    expect(wd.healthAddress).toEqual({ host: '127.0.0.1', port: second });
    await healthy(second);
    expect(await healthz(first)).toBe('ECONNREFUSED');

    await wd.reload(config('off'));
    expect(wd.healthAddress).toBeUndefined();
    expect(await healthz(second)).toBe('ECONNREFUSED');

    await wd.reload(config(`127.0.0.1:${first}`));
    await healthy(first);
    await wd.stop(1_000);
    expect(await healthz(first)).toBe('ECONNREFUSED');
  });
});
