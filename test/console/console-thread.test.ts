/**
 * The console on a thread of its own (`src/console/console-thread.ts`, `console-worker.ts`): a
 * page is answered while the daemon's main thread is blocked (as a statement's `Atomics.wait`
 * blocks it), on SQLite and PostgreSQL; a reload reaches it; a crash of the thread is logged and
 * it is restarted, the daemon going on; closing ends it within 2 s; its writes are fenced as the
 * leader's (`src/state/write-fence.ts`) on a real PostgreSQL, and its copy of the fence follows a
 * change told between the statements of a long transaction (`ConsoleThread.beat`).
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { listSilences } from '../../src/alerts/silences.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { CONSOLE_WAIT_MS, daemonFigures } from '../../src/console/console-handler.js';
import { ConsoleThread } from '../../src/console/console-thread.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { FencedError } from '../../src/state/fenced-error.js';
import { takeLeaseNow } from '../../src/state/leader-lease.js';
import { writeFence, type WriteFence } from '../../src/state/write-fence.js';
import { captureLogger, manualSim } from '../app/fixtures.js';
import { freePort } from '../helpers/free-port.js';
import { SQLITE_BACKEND, STATE_BACKENDS } from '../helpers/state-backends.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { threadPost } from '../helpers/thread-post.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A daemon's config: the simulator, the given state, yearly jobs (no tick in the test), a loopback listener. */
function daemonConfig(simUrl: string, token: string, stateYaml: string, port: number, runs = '0 0 1 1 *'): Config {
  const text = [
    'api: { base_url: "${SIM_URL}", token: "${DMS_API_TOKEN}", requests_per_second: 1000, max_retries: 0, timeout: 5s }',
    stateYaml,
    `jobs: { runs: "${runs}", servers: "0 0 1 1 *", urls: "off", backups: "off", attention: "off", maintenance: "off", installers: "off", jitter: 0s }`,
    'notify: { channels: [{ name: console, type: log }], routes: [{ channels: [console] }] }',
    `server: { listen: "127.0.0.1:${port}" }`,
  ].join('\n');
  return parseConfig(text, { SIM_URL: simUrl, DMS_API_TOKEN: token }, 'console-thread.yaml');
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

// A daemon on a new state and a first cycle take seconds on a loaded machine, PostgreSQL's more.
describe.each(STATE_BACKENDS)('the console on its own thread, $name', { timeout: 120_000 }, (backend) => {
  async function daemon(): Promise<{ wd: Watchdog; port: number; simUrl: string; token: string; yaml: string }> {
    const { sim, clock } = await manualSim({ apps: 8, seed: 5 });
    cleanups.push(() => sim.close());
    const state = backend.fresh();
    cleanups.push(() => state.cleanup());
    const port = await freePort();
    const config = daemonConfig(sim.baseUrl, sim.adminToken, state.yaml, port);
    const wd = Watchdog.open({ config, clock, logger: captureLogger('silent').logger });
    cleanups.push(() => wd.stop(1_000).then(() => undefined));
    await wd.start();
    await wd.runOnce();
    return { wd, port, simUrl: sim.baseUrl, token: sim.adminToken, yaml: state.yaml };
  }

  it('answers pages within 3 s while the main thread is blocked for 5 s, before it resumes', async () => {
    const { port } = await daemon();
    expect((await get(port, '/')).status).toBe(200);
    const posts = await Promise.all(
      ['/', '/sources'].map((path) =>
        threadPost({ url: `http://127.0.0.1:${port}${path}`, method: 'GET', headers: {}, body: '', delayMs: 300 }),
      ),
    );
    // This thread is the daemon's main thread: blocked as a statement's Atomics.wait blocks it.
    for (const p of posts) p.go();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5_000);
    const resumedAt = Date.now();
    const [alerts, sources] = await Promise.all(posts.map((p) => p.result));
    for (const answer of [alerts!, sources!]) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(3_000);
      // Answered while the main thread was still blocked; relayed to it, the answer would take > 4.7 s.
      expect(answer.at + answer.ms).toBeLessThan(resumedAt);
    }
    expect(alerts!.body).toContain('<title>');
    // The sources page shows the jobs the main thread published; readiness as last judged.
    expect(sources!.body).toContain('<code>0 0 1 1 *</code>');
  });

  it('shows the configuration a reload put in force', async () => {
    const { wd, port, simUrl, token, yaml } = await daemon();
    expect((await get(port, '/sources')).body).toContain('<code>0 0 1 1 *</code>');
    await wd.reload(daemonConfig(simUrl, token, yaml, port, '0 0 2 1 *'));
    await vi.waitFor(async () => expect((await get(port, '/sources')).body).toContain('<code>0 0 2 1 *</code>'), {
      timeout: 10_000,
      interval: 100,
    });
  });
});

/** A GET to the console's thread on its unix socket, as the front door relays it. */
function relayed(thread: ConsoleThread, path: string): Promise<{ status: number; body: string }> {
  const relay = thread.relay;
  if (!relay) return Promise.reject(new Error('the console thread does not listen'));
  return new Promise((resolve, reject) => {
    const req = request({
      socketPath: relay.socketPath,
      path,
      headers: { host: '127.0.0.1:9464', 'x-deploy-watchdog-relay': `${relay.token} 5555 127.0.0.1` },
      agent: false,
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A console thread alone on a fresh SQLite state, its fence what `fence` says (undefined: open). */
async function consoleThread(fence: () => WriteFence | undefined = () => undefined) {
  const state = SQLITE_BACKEND.fresh();
  cleanups.push(() => state.cleanup());
  const store = state.open();
  cleanups.push(() => store.close());
  const config = daemonConfig('http://127.0.0.1:1', 'token-of-the-test', state.yaml, 9464);
  const log = captureLogger('info');
  const thread = await ConsoleThread.start({
    console: {
      store,
      clock: new ManualClock(),
      logger: log.logger,
      config: () => config,
      jobs: () => new Map([['runs', '0 0 1 1 *']]),
      figures: () => daemonFigures(new Metrics(), () => []),
    },
    fence,
  });
  cleanups.push(() => thread.close());
  return { thread, log, store };
}

describe('the console thread', () => {
  it('is restarted after a crash, said in the log, and answers again', async () => {
    const { thread, log } = await consoleThread();
    expect((await relayed(thread, '/config')).status).toBe(200);
    const first = thread.thread!;
    await first.terminate();
    expect(thread.relay).toBeUndefined();
    expect(log.text()).toContain("the console's thread ended");
    await vi.waitFor(() => expect(thread.relay).toBeDefined(), { timeout: 10_000, interval: 50 });
    expect(thread.thread).not.toBe(first);
    expect((await relayed(thread, '/config')).status).toBe(200);
    expect(log.text()).toContain("the console's thread restarted");
  });

  it('refuses a request without the relay token, and ends within 2 s when closed', async () => {
    const { thread } = await consoleThread();
    const relay = thread.relay!;
    const refused = await new Promise<number>((resolve, reject) => {
      const req = request({ socketPath: relay.socketPath, path: '/config', agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(refused).toBe(403);
    const worker = thread.thread!;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const started = performance.now();
    await thread.close();
    await exited;
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(thread.relay).toBeUndefined();
  });
});

describe('the console thread’s fence during a long transaction', () => {
  it('follows a fence changed while the main thread is blocked between statements (beat)', async () => {
    // Stepping down when the thread starts: its copy of the fence refuses every write.
    let fence: WriteFence = { mode: 'refuse', reason: 'stepping down: test' };
    const { thread, store } = await consoleThread(() => fence);
    const relay = thread.relay!;
    const headers = { host: '127.0.0.1:9464', 'x-deploy-watchdog-relay': `${relay.token} 5555 127.0.0.1` };
    const csrf = /name="csrf" value="([^"]+)"/.exec((await relayed(thread, '/silences/new')).body)![1]!;
    const silence = (comment: string) =>
      threadPost({
        url: 'http://127.0.0.1:9464/silences',
        socketPath: relay.socketPath,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          csrf,
          intent: 'create',
          matchers: 'check=backups',
          previewed: JSON.stringify(['check=backups']),
          duration: '1h',
          comment,
        }).toString(),
        delayMs: 300,
      });
    const silences = () => listSilences(store, { now: Date.now(), includeExpired: true }).map((s) => s.reason);

    const refused = await silence('while stepping down');
    refused.go();
    const refusal = await refused.result;
    expect(refusal.status).toBe(503);
    expect(refusal.body).toContain('this replica no longer leads (stepping down: test). Try again in a few seconds.');
    expect(silences()).toEqual([]);

    // A long transaction: the main thread does not turn for 6 s (room for a loaded machine); between
    // its statements the lease is renewed (here: the fence opens) and the listener beats, as
    // `HealthListener.beat` does.
    const made = await silence('during the transaction');
    made.go();
    fence = { mode: 'open' };
    const blockedUntil = Date.now() + 6_000;
    while (Date.now() < blockedUntil) {
      thread.beat();
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    const resumedAt = Date.now();
    const answer = await made.result;
    expect(answer.status).toBe(303);
    // Answered before the main thread turned: the fence reached the thread by a beat, not its timer.
    expect(answer.at + answer.ms).toBeLessThan(resumedAt);
    expect(silences()).toEqual(['during the transaction']);
  });
});

describe('the console thread’s write fence, on PostgreSQL', () => {
  it('lets a write through as the leader while the lease is its own, and refuses it otherwise', () => {
    const state = STATE_BACKENDS[1]!.fresh();
    cleanups.push(() => state.cleanup());
    const store = state.open();
    const taken = takeLeaseNow(store.db, 'holder-a', 10_000);
    expect(taken).toHaveProperty('epoch');
    const epoch = (taken as { epoch: number }).epoch;
    const timeouts = { lockMs: 2_500, statementMs: 5_000, idleMs: 5_000 };
    let fence: WriteFence = { mode: 'fence', holder: 'holder-a', epoch, deadlineAt: Date.now() + 60_000, timeouts };
    const fenced = state.open({ writeGuard: writeFence(() => fence) });
    const write = (key: string) => fenced.transaction(() => fenced.setMeta(key, 'written'));
    write('leading');
    expect(store.getMeta('leading')).toBe('written');
    const refusals: [string, WriteFence][] = [
      ['another epoch', { ...fence, epoch: epoch + 1 }],
      ['another holder', { ...fence, holder: 'holder-b' }],
      ['past the deadline', { ...fence, deadlineAt: Date.now() - 1 }],
      ['stepping down', { mode: 'refuse', reason: 'stepping down: test' }],
    ];
    for (const [name, refused] of refusals) {
      fence = refused;
      expect(() => write(name), name).toThrow(FencedError);
      expect(store.getMeta(name), name).toBeUndefined();
    }
    fence = { mode: 'open' };
    write('following');
    expect(store.getMeta('following')).toBe('written');
  });
});

describe('the console while its PostgreSQL hangs', { timeout: 120_000 }, () => {
  it('says within seconds that the state does not answer, and shows the page again once it does', async () => {
    const { sim, clock } = await manualSim({ apps: 8, seed: 5 });
    cleanups.push(() => sim.close());
    const state = STATE_BACKENDS.find((b) => b.engine === 'postgres')!.fresh();
    cleanups.push(() => state.cleanup());
    const url = state.config.url!.reveal();
    // Between the daemon (both its threads) and the server: a network that drops every packet.
    const proxy = await startTcpProxy(Number(new URL(url).port));
    cleanups.push(() => proxy.close());
    const port = await freePort();
    const config = daemonConfig(sim.baseUrl, sim.adminToken, `state: { url: ${JSON.stringify(proxy.via(url))} }`, port);
    const wd = Watchdog.open({ config, clock, logger: captureLogger('silent').logger });
    cleanups.push(() => wd.stop(1_000).then(() => undefined));
    cleanups.push(() => proxy.restore());
    await wd.start();
    // The start's cycles done: the main thread waits on no statement when the network goes.
    await wd.runOnce();
    expect((await get(port, '/')).status).toBe(200);

    await proxy.hang();
    const started = Date.now();
    const hung = await get(port, '/');
    // Not the statement timeout (30 s here, as by default): the console's own wait, and a little.
    expect(Date.now() - started).toBeLessThan(CONSOLE_WAIT_MS + 3_000);
    expect(hung.status).toBe(503);
    expect(hung.body).toContain('The state does not answer');
    expect(hung.body).not.toContain(new URL(url).password);

    await proxy.restore();
    await vi.waitFor(async () => expect((await get(port, '/')).status).toBe(200), { timeout: 30_000, interval: 500 });
  });
});
