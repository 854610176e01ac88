import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator, type RunningSimulator } from '../src/index.js';
import { ENDLESS_LIST_TOTAL } from '../src/fault-injector.js';
import { MB } from '../src/fault-streams.js';
import { PLANS_WITH_LOGS } from '../src/vocabulary.js';
import { apiGet, apiPost, simControl, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-24T08:00:00Z');
const ECHOED = 'echo-me-token-0123';
const sim = await useSimulator({ apps: 20, clock, tokens: [{ token: ECHOED, namespaces: '*', permissions: '*' }] });
const state = sim.control.state;

/** Opens a GET as a stream (nothing buffered by the client). */
const open = (target: RunningSimulator, path: string, signal?: AbortSignal) =>
  request(`${target.baseUrl}/api/v1${path}`, {
    headers: { authorization: `Bearer ${target.adminToken}` },
    ...(signal ? { signal } : {}),
  });

/** Reads a body until `enough` bytes have come (then aborts) or it ends; answers the count and the first bytes. */
async function readUpTo(
  body: AsyncIterable<Buffer>,
  enough: number,
  abort: () => void,
): Promise<{ bytes: number; head: string }> {
  let bytes = 0;
  let head = '';
  try {
    for await (const chunk of body) {
      if (head.length < 64) head += chunk.toString('utf8', 0, 64);
      bytes += chunk.length;
      if (bytes >= enough) abort();
    }
  } catch (err) {
    if (bytes < enough) throw err;
  }
  return { bytes, head };
}

/** The bodies the simulator is writing, once it has seen what the client did (a bounded number of turns). */
async function openStreams(target: RunningSimulator, expected: number): Promise<number> {
  for (let i = 0; i < 500 && target.control.stats().streams !== expected; i += 1)
    await new Promise((r) => setTimeout(r, 2));
  return target.control.stats().streams;
}

describe('huge', () => {
  it('answers 200 with exactly N MB of valid JSON, streamed chunked without a length', async () => {
    sim.control.setFault('apps.list', { hugeMb: 5, times: 1 });
    const res = await open(sim, '/apps?limit=3');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const chunks: Buffer[] = [];
    let bytes = 0;
    let largest = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      largest = Math.max(largest, chunk.length);
      chunks.push(chunk);
    }
    expect(bytes).toBe(5 * MB);
    expect(chunks.length).toBeGreaterThan(10);
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    expect(parsed.data.items).toHaveLength(3);
    expect(parsed.data.total).toBe(20);
    expect(parsed.padding).toMatch(/^x+$/);
    expect((await apiGet(sim, '/apps?limit=3')).text.length).toBeLessThan(10_000);
  });

  it('sends a refusal as it is', async () => {
    sim.control.setFault('apps.get', { hugeMb: 5, times: 1 });
    const res = await apiGet(sim, '/apps/999999');
    expect(res.status).toBe(404);
    expect(res.text.length).toBeLessThan(200);
  });

  it('is set through the control interface, which refuses a size that is not a positive number', async () => {
    expect((await simControl(sim, 'setFault', ['whoami', { hugeMb: 1, times: 1 }])).status).toBe(200);
    expect((await apiGet(sim, '/whoami')).text.length).toBe(MB);
    const bad = await simControl(sim, 'setFault', ['whoami', { hugeMb: -1 }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/hugeMb must be a number of MB above 0/);
  });
});

describe('endless', () => {
  it('streams a body that starts like JSON and never ends; the client aborts and the simulator answers the next request', async () => {
    sim.control.setFault('runs.list', { endless: true, times: 1 });
    const abort = new AbortController();
    const res = await open(sim, '/runs', abort.signal);
    expect(res.statusCode).toBe(200);
    expect(sim.control.stats().streams).toBe(1);
    const { bytes, head } = await readUpTo(res.body as AsyncIterable<Buffer>, 8 * MB, () => abort.abort());
    expect(bytes).toBeGreaterThanOrEqual(8 * MB);
    expect(head).toMatch(/^\{"data":\{"items":\[\{"id":0,/);
    expect((await apiGet(sim, '/runs?limit=1')).body.data.items).toHaveLength(1);
    // The stream ends once the client is gone: no timer, listener or buffer is left behind.
    expect(await openStreams(sim, 0)).toBe(0);
  });

  it('does not make a change, so its idempotency key is free again once the client gives up', async () => {
    const app = [...state.apps.values()].find(
      (a) => a.state === 'running' && a.envType === 'development' && !a.upgrade,
    )!;
    const runs = state.runs.size;
    sim.control.setFault('apps.restart', { endless: true, times: 1 });
    const abort = new AbortController();
    const res = await request(`${sim.baseUrl}/api/v1/apps/${app.id}/restart`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sim.adminToken}`,
        'content-type': 'application/json',
        'idempotency-key': 'k-endless',
      },
      body: '{}',
      signal: abort.signal,
    });
    await readUpTo(res.body as AsyncIterable<Buffer>, MB, () => abort.abort());
    expect(state.runs.size).toBe(runs);
    let again = await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-endless' });
    // The simulator sees the disconnect a moment after the client makes it.
    for (let i = 0; i < 50 && again.status === 409; i += 1)
      again = await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-endless' });
    expect(again.status).toBe(200);
    expect(state.runs.size).toBe(runs + 1);
  });

  it('close() ends endless and huge bodies at once', async () => {
    const own = await startSimulator({ apps: 2, clock });
    own.control.setFault('runs.list', { endless: true });
    own.control.setFault('apps.list', { hugeMb: 2_000 });
    const endless = await open(own, '/runs');
    const huge = await open(own, '/apps');
    const endlessBody = (endless.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const hugeBody = (huge.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    expect((await endlessBody.next()).done).toBe(false);
    expect((await hugeBody.next()).done).toBe(false);
    expect(own.control.stats().streams).toBe(2);
    await own.close();
    expect(own.control.stats().streams).toBe(0);
    const drain = async (it: AsyncIterator<Buffer>) => {
      try {
        while (!(await it.next()).done);
        return 'ended';
      } catch {
        return 'cut';
      }
    };
    expect(await drain(endlessBody)).toBe('cut');
    expect(await drain(hugeBody)).toBe('cut');
  });
});

describe('echoToken', () => {
  it.each([
    ['runs.get', () => `/runs/${state.runIndex.all[0]!.id}`, (d: any) => [d.id, d.steps[0].reason]],
    ['apps.list', () => '/apps?limit=2', (d: any) => [d.items[0].id, d.items[0].name]],
    ['apps.get', () => '/apps/3', (d: any) => [d.id, d.name]],
    ['whoami', () => '/whoami', (d: any) => [d.namespaces[0].id, d.name]],
  ])('puts the caller token in %s: a record id (a string) and a free-text field', async (fn, path, fields) => {
    sim.control.setFault(fn as 'runs.get', { echoToken: true, times: 1 });
    const res = await apiGet(sim, path(), ECHOED);
    expect(res.status).toBe(200);
    const [id, text] = fields(res.body.data);
    expect(id).toBe(ECHOED);
    expect(text).toContain(ECHOED);
  });

  it('puts it in a log line', async () => {
    const app = [...state.apps.values()].find(
      (a) => a.state === 'running' && PLANS_WITH_LOGS.includes(state.projectOf(a).plan),
    )!;
    sim.control.setFault('logs.tail', { echoToken: true, times: 1 });
    expect((await apiGet(sim, `/apps/${app.id}/logs`, ECHOED)).body.data.items[0].line).toContain(ECHOED);
  });

  it("quotes it in a refusal's message", async () => {
    sim.control.setFault('apps.get', { echoToken: true, times: 1 });
    const res = await apiGet(sim, '/apps/999999', ECHOED);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain(ECHOED);
  });
});

describe('endlessList', () => {
  it('answers a total of a billion and full pages of ids never given before, far past the real end', async () => {
    sim.control.setFault('runs.list', { endlessList: true });
    const seen = new Set<number>();
    const real = new Set(state.runs.keys());
    for (const offset of [...Array.from({ length: 40 }, (_, i) => i * 100), 999_999_900]) {
      const data = (await apiGet(sim, `/runs?limit=100&offset=${offset}`)).body.data;
      expect(data.total).toBe(ENDLESS_LIST_TOTAL);
      expect(data.items).toHaveLength(100);
      for (const item of data.items) {
        expect(Number.isInteger(item.id)).toBe(true);
        expect(seen.has(item.id) || real.has(item.id)).toBe(false);
        seen.add(item.id);
      }
    }
    expect(seen.size).toBe(4_100);
    sim.control.clearFaults();
    expect((await apiGet(sim, '/runs?limit=1')).body.data.total).toBe(state.runs.size);
  });

  it('leaves a function that is not a list as it is', async () => {
    sim.control.setFault('*', { endlessList: true, times: 1 });
    expect((await apiGet(sim, '/apps/3')).body.data.id).toBe(3);
  });
});
