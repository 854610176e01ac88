/**
 * List walks against the simulator over loopback: more than 1,000 items, lists that shift while
 * they are paged (a run or backup appearing between two pages, made to happen at an exact point
 * through the client's observer hook), the early stop for newest-first lists, and page streams.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiAttempt, type ApiClientOptions } from '../../src/api/client.js';
import { ApiPaginationError } from '../../src/api/errors.js';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';
import { captureLogs } from './log-capture.js';

const sim = await useSimulator({ apps: 50, seed: 4, clock: new ManualClock('2026-11-01T12:00:00Z') });
const anyAppId = [...sim.control.state.apps.keys()][0]!;

const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((c) => c())));

/** A client; `observer` runs after every HTTP attempt, which is where tests change the list. */
function client(over: Partial<ApiClientOptions> = {}) {
  const logs = captureLogs();
  const c = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    clock: new JumpingClock(),
    requestsPerSecond: Infinity,
    logger: logs.logger,
    ...over,
  });
  closers.push(() => c.close());
  return { c, logs };
}

/** Runs `act` and counts the requests of `fn` the simulator answered meanwhile (one per page). */
async function pagesRead<T>(fn: string, act: () => Promise<T>): Promise<{ result: T; pages: number }> {
  sim.control.resetRequests();
  const result = await act();
  return { result, pages: sim.control.requests().filter((r) => r.fn === fn && r.status === 200).length };
}

const unique = (ids: number[]) => new Set(ids).size === ids.length;

/** An observer that runs `change` after the listed attempts of `fn` (1-based, counted per client). */
const changeAfter = (fn: string, when: (n: number) => boolean, change: () => void) => {
  let n = 0;
  return (a: ApiAttempt) => {
    if (a.fn !== fn) return;
    n += 1;
    if (when(n)) change();
  };
};

/** A run that arrives now, at the head of the newest-first list. */
const newRun = () => sim.control.addRun({ appId: anyAppId, state: 'done', startedAgoMs: 0 }).id;
/** A run created long ago: it comes below the part of the list already read. */
const oldRun = () => sim.control.addRun({ appId: anyAppId, state: 'done', startedAgoMs: 400 * 24 * 3600_000 }).id;
const shifts = (logs: ReturnType<typeof captureLogs>) =>
  logs.records().filter((r) => r.msg === 'list shifted while paged; reading it again');

describe('listAll over more than 1,000 items', () => {
  it('reads every backup once, in pages of pageSize, and the count is the total', async () => {
    const { c } = client();
    const { total } = await c.backups.list({ limit: 1 });
    expect(total).toBeGreaterThan(1_000);
    const { result, pages } = await pagesRead('backups.list', () => c.backups.listAll());
    expect(result).toHaveLength(total);
    expect(unique(result.map((b) => b.id))).toBe(true);
    expect(pages).toBe(Math.ceil(total / 200));
    // Newest first, as the reference says.
    const taken = result.map((b) => b.taken_at!);
    expect([...taken].sort().reverse()).toEqual(taken);
  });

  it.each([100, 500, 1_000])('gives the same list with pageSize %i', async (pageSize) => {
    const { c } = client({ pageSize });
    const all = await client().c.backups.listAll();
    const { result, pages } = await pagesRead('backups.list', () => c.backups.listAll());
    expect(result.map((b) => b.id)).toEqual(all.map((b) => b.id));
    expect(pages).toBe(Math.ceil(all.length / pageSize));
  });

  it('keeps the query of a filtered walk on every page', async () => {
    const { c } = client({ pageSize: 7 });
    const { total } = await c.apps.list({ environment_type: 'production', limit: 1 });
    const prod = await c.apps.listAll({ environment_type: 'production' });
    expect(prod).toHaveLength(total);
    expect(new Set(prod.map((a) => a.environment_type))).toEqual(new Set(['production']));
  });

  it('walks the restore points of one app', async () => {
    const appId = sim.control.state.restorePoints.values().next().value!.appId;
    const { c } = client({ pageSize: 2 });
    const { total } = await c.restorePoints(appId).list();
    const all = await c.restorePoints(appId).listAll();
    expect(all).toHaveLength(total);
    expect(new Set(all.map((p) => p.app_id))).toEqual(new Set([appId]));
  });

  it('streams the pages of one walk with pages()', async () => {
    const { c } = client({ pageSize: 300 });
    const sizes: number[] = [];
    for await (const page of c.backups.pages()) sizes.push(page.items.length);
    const { total } = await c.backups.list({ limit: 1 });
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(total);
    expect(sizes.slice(0, -1).every((s) => s === 300)).toBe(true);
  });

  it('passes over, unparsed, the records the reader drops (passOver), and walks as far', async () => {
    const { c } = client({ pageSize: 300 });
    const all = await c.backups.listAll();
    const dropped = new Set(all.filter((b) => b.app_id !== null && b.app_id % 2 === 0).map((b) => b.id));
    const kept: number[] = [];
    let walked = 0;
    for await (const page of c.backups.pages(undefined, {
      passOver: { key: 'app_id', when: (appId) => appId % 2 === 0 },
    })) {
      walked += page.walked;
      kept.push(...page.items.map((b) => b.id));
    }
    expect(dropped.size).toBeGreaterThan(100);
    expect(walked).toBe(all.length);
    expect(kept).toEqual(all.filter((b) => !dropped.has(b.id)).map((b) => b.id));
  });
});

describe('a list that shifts while it is paged', () => {
  it('reads every run once in one walk when a new run arrives at the head after page 1', async () => {
    const before = (await client().c.runs.listAll()).map((r) => r.id);
    let added: number | undefined;
    const { c, logs } = client({
      pageSize: 100,
      observer: changeAfter(
        'runs.list',
        (n) => n === 1,
        () => (added = newRun()),
      ),
    });
    const { result, pages } = await pagesRead('runs.list', () => c.runs.listAll());
    // Newest first, the new run pushed the others down one place: page 2 repeats page 1's last run,
    // and the walk goes on; the new run is left to the next walk.
    expect(result.map((r) => r.id)).toEqual(before);
    expect(added).toBeGreaterThan(Math.max(...before));
    expect(pages).toBe(Math.ceil((before.length + 1) / 100));
    expect(shifts(logs)).toEqual([]);
  });

  it('reads every backup once in one walk when churn adds backups between pages', async () => {
    const before = (await client().c.backups.listAll()).map((b) => b.id);
    const { c, logs } = client({
      pageSize: 250,
      observer: changeAfter(
        'backups.list',
        (n) => n === 2,
        () => sim.control.churn(0.5),
      ),
    });
    const backups = await c.backups.listAll();
    expect(backups.map((b) => b.id)).toEqual(before);
    expect(shifts(logs)).toEqual([]);
  });

  it('never fails a walk of the runs on a busy service: a new run after every page', async () => {
    const before = (await client().c.runs.listAll()).map((r) => r.id);
    const { c, logs } = client({ pageSize: 200, observer: changeAfter('runs.list', () => true, newRun) });
    const { result, pages } = await pagesRead('runs.list', () => c.runs.listAll());
    expect(result.map((r) => r.id)).toEqual(before);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(before.length / 200));
    expect(shifts(logs)).toEqual([]);
  });

  it('throws ApiPaginationError after 3 walks when a run comes below the part read after every page', async () => {
    const { c } = client({ pageSize: 200, observer: changeAfter('runs.list', () => true, oldRun) });
    const err = await c.runs.listAll().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiPaginationError);
    expect(err).toMatchObject({ fn: 'runs.list', walks: 3, shift: 'total_changed' });
    expect((err as Error).message).toMatch(/^runs\.list: list kept changing while paged \(3 walk\(s\)\)/);
  });

  it('ends pages() with ApiPaginationError at the shift (pages already handed out cannot be taken back)', async () => {
    const { c } = client({ pageSize: 200, observer: changeAfter('runs.list', (n) => n === 1, oldRun) });
    const seen: number[] = [];
    const err = await (async () => {
      for await (const page of c.runs.pages()) seen.push(page.items.length);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([200]);
    expect(err).toMatchObject({ name: 'ApiPaginationError', walks: 1 });
  });

  it('streams every backup once with pages() while backups arrive at the head after every page', async () => {
    const all = await client().c.backups.listAll();
    const odd = (appId: number | null) => appId === null || appId % 2 === 1;
    const { c } = client({
      pageSize: 300,
      observer: changeAfter(
        'backups.list',
        () => true,
        () => sim.control.checks.backups.add(anyAppId, { hoursAgo: 0 }),
      ),
    });
    const read: number[] = [];
    let walked = 0;
    // The backups of apps with even ids are passed over unparsed: repeats among them count too.
    for await (const page of c.backups.pages(undefined, {
      passOver: { key: 'app_id', when: (appId) => !odd(appId) },
    })) {
      walked += page.walked;
      read.push(...page.items.map((b) => b.id));
    }
    expect(read).toEqual(all.filter((b) => odd(b.app_id)).map((b) => b.id));
    expect(walked).toBeGreaterThan(all.length);
  });
});

describe('early stop for newest-first lists', () => {
  it('reads only the runs newer than a cutoff, and only the pages it needs', async () => {
    const { c } = client({ pageSize: 100 });
    const all = await c.runs.listAll();
    const cutoff = all[250]!.created_at!;
    const stop = all.findIndex((r) => r.created_at! < cutoff);
    const { result, pages } = await pagesRead('runs.list', () =>
      c.runs.listAll({}, { until: (r) => r.created_at! < cutoff }),
    );
    expect(result.map((r) => r.id)).toEqual(all.slice(0, stop).map((r) => r.id));
    expect(pages).toBe(Math.floor(stop / 100) + 1);
    expect(pages).toBeLessThan(Math.ceil(all.length / 100));
  });

  it('passes over the runs a new one pushed down, and reads again when an older run comes into the part read', async () => {
    const all = await client().c.runs.listAll();
    const cutoff = all[120]!.created_at!;
    const stop = all.findIndex((r) => r.created_at! < cutoff);
    const until = (r: { created_at: string | null }) => r.created_at! < cutoff;
    // A new run at the head after page 1: the walk goes on, and leaves it to the next one.
    const head = client({ pageSize: 50, observer: changeAfter('runs.list', (n) => n === 1, newRun) });
    const recent = await head.c.runs.listAll({}, { until });
    expect(recent.map((r) => r.id)).toEqual(all.slice(0, stop).map((r) => r.id));
    expect(shifts(head.logs)).toEqual([]);
    // A run created just before the 80th, after page 1: it comes below the read position, where
    // the walk cannot tell an arrival from a skip. The walk is read again, and the run is in it.
    let older: number | undefined;
    const agoMs = sim.control.now() - Date.parse(all[80]!.created_at!) + 1;
    const below = client({
      pageSize: 50,
      observer: changeAfter(
        'runs.list',
        (n) => n === 1,
        () => (older = sim.control.addRun({ appId: anyAppId, state: 'done', startedAgoMs: agoMs }).id),
      ),
    });
    const again = await below.c.runs.listAll({}, { until });
    expect(unique(again.map((r) => r.id))).toBe(true);
    expect(again.map((r) => r.id)).toContain(older);
    expect(shifts(below.logs)).toMatchObject([{ walk: 1, shift: 'total_changed' }]);
  });
});
