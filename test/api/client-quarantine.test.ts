/**
 * The adversary pass at the edge: every field of every record kind broken in turn, on one record of
 * a list answered by the simulator over loopback. The walk hands back every other record, and the
 * broken one set aside with its kind, its id (unless the id itself is what broke) and why. Without
 * a quarantine to set it aside in, the same answer still fails whole, as before.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ApiError, ApiResponseError } from '../../src/api/errors.js';
import { FUNCTIONS } from '../../src/api/functions.js';
import { elementSchemaOf, Quarantine } from '../../src/api/quarantine.js';
import { Secret } from '../../src/lib/secret.js';
import { UNREADABLE_TIME } from '../../packages/simulator/src/fault-rewrites.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';

const clock = new JumpingClock();
// Enough apps for a few marketplace services (about one per ten apps), so each list has several pages of 7.
const sim = await useSimulator({ apps: 40, seed: 9, clock });
const c = createApiClient({
  baseUrl: sim.baseUrl,
  token: new Secret(sim.adminToken),
  clock,
  requestsPerSecond: Infinity,
  maxRetries: 0,
  pageSize: 7,
});
afterAll(() => c.close());
afterEach(() => sim.control.clearFaults());

const LISTS = [
  'apps.list',
  'runs.list',
  'urls.list',
  'backups.list',
  'servers.list',
  'installers.list',
  'projects.list',
] as const;
type ListFn = (typeof LISTS)[number];

/** The walk of each list, through the client as the collectors call it. */
const walks: Record<ListFn, (quarantine?: Quarantine) => Promise<{ id: number }[]>> = {
  'apps.list': (quarantine) => c.apps.listAll({}, { quarantine }),
  'runs.list': (quarantine) => c.runs.listAll({}, { quarantine }),
  'urls.list': (quarantine) => c.urls.listAll({}, { quarantine }),
  'backups.list': (quarantine) => c.backups.listAll({}, { quarantine }),
  'servers.list': (quarantine) => c.servers.listAll({}, { quarantine }),
  'installers.list': (quarantine) => c.installers.listAll({}, { quarantine }),
  'projects.list': (quarantine) => c.projects.listAll({}, { quarantine }),
};

const KIND: Record<ListFn, string> = {
  'apps.list': 'app',
  'runs.list': 'run',
  'urls.list': 'url',
  'backups.list': 'backup',
  'servers.list': 'server',
  'installers.list': 'installer',
  'projects.list': 'project',
};

/**
 * Each field of each list's items, broken two ways: a value of no declared type (an object), and
 * for a timestamp a time no reader can parse. A string field of a stated set (an enum) broken with
 * a word beyond it is a value beyond the stated ones.
 */
const CASES = LISTS.flatMap((fn) => {
  const shape = (elementSchemaOf(FUNCTIONS[fn].answer, 'items') as unknown as { shape: Record<string, unknown> }).shape;
  return Object.keys(shape).flatMap((field) => {
    const out: [ListFn, string, unknown, string][] = [[fn, field, { broken: true }, 'unreadable']];
    if (field.endsWith('_at')) out.push([fn, field, UNREADABLE_TIME, 'unreadable']);
    if (['ssl_status', 'backup_health', 'environment_type', 'public_check'].includes(field))
      out.push([fn, field, 'revoked', 'unknown_value']);
    return out;
  });
});

describe('every field of every record kind, broken on one record in the middle of a list', () => {
  it('covers every list the collectors walk, every field of their items', () => {
    expect(new Set(CASES.map(([fn]) => fn))).toEqual(new Set(LISTS));
    expect(CASES.length).toBeGreaterThan(80);
  });

  it.each(CASES)('%s: %s = %j is set aside (%s); every other record read', async (fn, field, value, reason) => {
    const all = await walks[fn]();
    expect(all.length).toBeGreaterThan(2);
    // A record in the middle of the second page, so the walk goes on past it.
    const target = all[Math.min(all.length - 1, 8)]!;
    sim.control.setFault(fn, { recordField: { id: target.id, field, value } });
    const quarantine = new Quarantine();
    const read = await walks[fn](quarantine);
    expect(read.map((r) => r.id)).toEqual(all.map((r) => r.id).filter((id) => id !== target.id));
    const [aside, ...more] = quarantine.records();
    expect(more).toEqual([]);
    expect(aside).toMatchObject({ kind: KIND[fn], reason, fn });
    // The id is named unless it is the id that broke.
    expect(aside!.id).toBe(field === 'id' ? undefined : target.id);
    expect(aside!.detail).toContain(field);

    // Without a quarantine the answer fails whole, as it always did: nothing is dropped unsaid.
    await expect(walks[fn]()).rejects.toBeInstanceOf(ApiResponseError);
  });
});

describe('what fails a read whole', () => {
  it.each([
    ['total of another type', { wrongType: true }],
    ['JSON cut off', { malformedJson: true }],
  ] as const)('the page itself: %s', async (_name, fault) => {
    sim.control.setFault('urls.list', fault);
    await expect(c.urls.listAll({}, { quarantine: new Quarantine() })).rejects.toBeInstanceOf(ApiResponseError);
  });

  it('the list refused', async () => {
    sim.control.setFault('runs.list', { errorCode: 'internal_error' });
    await expect(c.runs.listAll({}, { quarantine: new Quarantine() })).rejects.toBeInstanceOf(ApiError);
  });
});

describe('one page read with list()', () => {
  it('hands the set-aside record to the quarantine and the rest back', async () => {
    const page = await c.urls.list({ limit: 5 });
    const target = page.items[2]!;
    sim.control.setFault('urls.list', { recordField: { id: target.id, field: 'ssl_status', value: 'revoked' } });
    const quarantine = new Quarantine();
    const read = await c.urls.list({ limit: 5 }, { quarantine });
    expect(read).toEqual({ items: page.items.filter((u) => u.id !== target.id), total: page.total });
    expect(quarantine.records()).toMatchObject([{ kind: 'url', id: target.id, reason: 'unknown_value' }]);
  });
});

describe('a read by id that does not fit', () => {
  it('fails with what is wrong with its record, for its caller to set aside', async () => {
    const app = [...sim.control.state.apps.values()].find((a) => a.deployedAt !== null)!;
    sim.control.setFault('apps.get', { recordField: { field: 'urls.0.ssl_status', value: 'revoked' } });
    const err = await c.apps.get(app.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect((err as ApiResponseError).record).toMatchObject({
      reason: 'unknown_value',
      field: 'urls[0].ssl_status',
      value: 'revoked',
    });
    sim.control.setFault('runs.get', { unreadableTime: {} });
    const run = [...sim.control.state.runs.values()][0]!;
    const timeErr = (await c.runs.get(run.id).catch((e: unknown) => e)) as ApiResponseError;
    expect(timeErr.record?.reason).toBe('unreadable');
  });
});
