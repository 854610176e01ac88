import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError, ApiResponseError, ApiTransportError } from '../../src/api/errors.js';
import { paginate, pageStream, type PageFetcher, type QuarantinedPage } from '../../src/api/paginate.js';
import {
  compiledSchema,
  parseRecord,
  Quarantine,
  quarantined,
  recordProblemOf,
  type QuarantinedRecord,
} from '../../src/api/quarantine.js';
import { appSchema, urlRecordSchema } from '../../src/api/schemas.js';
import { statedFieldAt, withExtraValues } from '../../src/api/extra-values.js';

const URL_RECORD = {
  id: 7,
  url: 'https://shop.example.com',
  namespace: 'acme',
  app_id: 3,
  app: 'shop',
  project: 'Shop',
  environment_type: 'production',
  primary: true,
  state: 'active',
  ssl_status: 'valid',
  ssl_expires_at: '2027-01-01T00:00:00Z',
  public_check: 'passed',
  public_check_code: null,
  public_checked_at: '2026-11-24T08:00:00+05:30',
};

describe('parseRecord: one record at a time', () => {
  it.each([
    ['a record that fits', {}, { ok: true }],
    [
      'a value beyond the stated ones',
      { ssl_status: 'revoked' },
      { reason: 'unknown_value', field: 'ssl_status', value: 'revoked' },
    ],
    [
      'an environment type beyond the stated ones',
      { environment_type: 'preprod' },
      { reason: 'unknown_value', field: 'environment_type', value: 'preprod' },
    ],
    ['a stated field of another type', { ssl_status: 3 }, { reason: 'unreadable' }],
    ['a timestamp no reader can parse', { ssl_expires_at: 'sometime yesterday' }, { reason: 'unreadable' }],
    ['a timestamp without a zone', { public_checked_at: '2026-11-24T08:00:00' }, { reason: 'unreadable' }],
    ['a field missing', { url: undefined }, { reason: 'unreadable' }],
    ['an id of another type', { id: 'seven' }, { reason: 'unreadable' }],
  ] as const)('%s', (_name, patch, expected) => {
    const read = parseRecord(urlRecordSchema, { ...URL_RECORD, ...patch });
    if ('ok' in expected) return expect(read.ok).toBe(true);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problem).toMatchObject(expected);
  });

  it('names the field and the value, and the path of a nested one (apps.get urls[0].ssl_status)', () => {
    const app = {
      id: 3,
      name: 'shop',
      namespace: 'acme',
      project: 'Shop',
      environment: 'prod',
      environment_type: 'production',
      version: '19.0',
      edition: 'community',
      state: 'running',
      url: null,
      server: null,
      deployed_at: null,
      updated_at: null,
      backup_health: 'healthy',
      last_backup_at: null,
      urls: [{ ...URL_RECORD, ssl_status: 'revoked' }],
      repositories: [],
      upgrade: null,
      maintenance: false,
    };
    const read = parseRecord(appSchema, app);
    expect(read.ok || read.problem).toEqual({
      reason: 'unknown_value',
      field: 'urls[0].ssl_status',
      value: 'revoked',
      detail:
        'urls[0].ssl_status: "revoked" is not one of the values the reference states (to read it as one, set api.extra_values.ssl_status.revoked to the stated value it means)',
      configKey: 'api.extra_values.ssl_status.revoked',
    });
    // Made known (api.extra_values): read as the stated value it means, the record otherwise as it came.
    const known = parseRecord(appSchema, app, { ssl_status: { revoked: 'error' } });
    expect(known.ok && (known.data as { urls: { ssl_status: string }[] }).urls[0]!.ssl_status).toBe('error');
    expect(app.urls[0]!.ssl_status).toBe('revoked');
    // Only every odd value known lets a record in: a second one unknown still sets it aside.
    const twice = { ...app, backup_health: 'superb' };
    const partly = parseRecord(appSchema, twice, { ssl_status: { revoked: 'error' } });
    expect(partly.ok || partly.problem.reason).toBe('unknown_value');
    const both = parseRecord(appSchema, twice, {
      ssl_status: { revoked: 'error' },
      backup_health: { superb: 'healthy' },
    });
    expect(both.ok).toBe(true);
    const time = parseRecord(appSchema, { ...app, urls: [], deployed_at: 'soon' });
    expect(time.ok || time.problem.detail).toMatch(/^deployed_at: /);
  });
});

describe('statedFieldAt: the api.extra_values key of a field', () => {
  it.each<[string, PropertyKey[], string | undefined]>([
    ['a URL record', ['ssl_status'], 'ssl_status'],
    ["an app's URL", ['urls', 0, 'ssl_status'], 'ssl_status'],
    ["a run's watcher", ['watcher', 'state'], 'watcher.state'],
    ["an app's upgrade", ['upgrade', 'purpose'], 'upgrade.purpose'],
    ['a change result', ['state'], 'state'],
    ["a run's state (free text, no stated values)", ['steps', 0, 'state'], undefined],
    ['a field with no stated values', ['name'], undefined],
  ])('%s', (_what, path, key) => {
    expect(statedFieldAt(path)).toBe(key);
  });
});

describe('withExtraValues: the values the admin made known', () => {
  it('knows only the keys the admin wrote: a value named like an object property ("constructor") is none', () => {
    const record = { ...URL_RECORD, ssl_status: 'constructor' };
    const issues = urlRecordSchema.safeParse(record).error!.issues;
    // A schema taking anything there, so whatever the look-up found would come out.
    const anything = urlRecordSchema.extend({ ssl_status: z.unknown() });
    expect(withExtraValues(anything, record, issues, { ssl_status: { revoked: 'error' } })).toBeUndefined();
    const known = withExtraValues(anything, record, issues, { ssl_status: { constructor: 'error' } });
    expect(known?.data).toMatchObject({ ssl_status: 'error' });
  });
});

describe('quarantined: what a set-aside record holds', () => {
  it.each([
    ['runs.list', { id: 5 }, undefined, 'run', 5, [{ type: 'run', id: 5 }]],
    ['urls.list', { id: 'x' }, undefined, 'url', undefined, [{ type: 'url' }]],
    [
      'backups.list',
      { id: 9, app_id: 3 },
      undefined,
      'backup',
      9,
      [
        { type: 'backup', id: 9 },
        { type: 'app', id: 3 },
      ],
    ],
    ['restore_points.list', { id: 2, app_id: 'three' }, undefined, 'restore_point', 2, [{ type: 'app' }]],
    ['apps.get', undefined, 11, 'app', 11, [{ type: 'app', id: 11 }]],
    ['projects.list', { id: 4 }, undefined, 'project', 4, []],
  ] as const)('%s %j (id %s)', (fn, item, id, kind, ownId, subjects) => {
    const record = quarantined(fn, item, { reason: 'unreadable', detail: 'x' }, id);
    expect(record.kind).toBe(kind);
    expect(record.id).toBe(ownId);
    expect(record.subjects).toEqual(subjects);
  });

  it('counts the same record once, however often it is met', () => {
    const q = new Quarantine();
    const r = quarantined('runs.get', undefined, { reason: 'access_denied', detail: 'x' }, 5);
    q.add(r);
    q.add({ ...r });
    q.add(quarantined('runs.list', { id: 'a' }, { reason: 'unreadable', detail: 'id: bad' }));
    expect(q.records()).toHaveLength(2);
  });
});

describe("recordProblemOf: which failures of a read by id are the record's", () => {
  const refused = (code: string) => new ApiError('runs.get', { code, status: 403, message: 'no' });
  it.each([
    ['access_denied', refused('access_denied'), 'access_denied'],
    ['not_found', refused('not_found'), 'not_found'],
    ['internal_error', refused('internal_error'), undefined],
    ['invalid_token', refused('invalid_token'), undefined],
    ['function_not_allowed', refused('function_not_allowed'), undefined],
    ['rate_limited', refused('rate_limited'), undefined],
    ['a timeout', new ApiTransportError('runs.get', 'timeout', 'slow'), undefined],
    ['not JSON', new ApiResponseError('runs.get', { status: 200, problem: 'not_json', detail: '<html>' }), undefined],
    [
      'a record that does not fit',
      new ApiResponseError('runs.get', {
        status: 200,
        problem: 'schema',
        detail: 'x',
        record: { reason: 'unreadable', detail: 'created_at: x' },
      }),
      'unreadable',
    ],
  ] as const)('%s', (_name, err, reason) => {
    expect(recordProblemOf(err)?.reason).toBe(reason);
  });
});

// The walk with pages that set records aside: in memory, as paginate.test.ts drives it.
interface Item {
  id: number;
}

/** A list of `count` ids, newest first, whose records in `bad` come back set aside. */
function listWithBad(count: number, bad: ReadonlySet<number>, opts: { unnamed?: boolean; shiftOnce?: boolean } = {}) {
  let calls = 0;
  const list = Array.from({ length: count }, (_, i) => count - i);
  const fetch: PageFetcher<Item> = async (offset, limit): Promise<QuarantinedPage<Item>> => {
    calls++;
    if (opts.shiftOnce && calls === 2) list.unshift(1000);
    const ids = list.slice(offset, offset + limit);
    const aside: QuarantinedRecord[] = ids
      .filter((id) => bad.has(id))
      .map((id) =>
        quarantined('runs.list', { id: opts.unnamed ? 'x' : id }, { reason: 'unreadable', detail: `id ${id}` }),
      );
    return { items: ids.filter((id) => !bad.has(id)).map((id) => ({ id })), total: list.length, quarantined: aside };
  };
  return { fetch, calls: () => calls };
}

describe('a walk with records set aside', () => {
  it('counts them as items (pages full, total met) and hands them on once the walk is complete', async () => {
    const q = new Quarantine();
    const m = listWithBad(120, new Set([100, 51, 3]));
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, quarantine: q });
    expect(items).toHaveLength(117);
    expect(q.records().map((r) => r.id)).toEqual([100, 51, 3]);
    expect(m.calls()).toBe(3);
  });

  it('counts records whose id cannot be read, and still matches total', async () => {
    const q = new Quarantine();
    const m = listWithBad(60, new Set([10, 20]), { unnamed: true });
    expect(await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, quarantine: q })).toHaveLength(58);
    expect(q.records().map((r) => r.id)).toEqual([undefined, undefined]);
  });

  it('a walk thrown away (the list shifted) hands nothing; the walk read again hands each record once', async () => {
    const q = new Quarantine();
    const m = listWithBad(80, new Set([70, 5]), { shiftOnce: true });
    const items = await paginate(m.fetch, { fn: 'runs.list', pageSize: 50, quarantine: q });
    expect(items).toHaveLength(79);
    expect(q.records().map((r) => r.id)).toEqual([70, 5]);
  });

  it('a set-aside id that comes twice is a shift like any other', async () => {
    const fetch: PageFetcher<Item> = async (offset) => {
      // Page two repeats the record set aside on page one, on every walk.
      const aside = [quarantined('runs.list', { id: 9 }, { reason: 'unreadable', detail: '' })];
      return { items: offset === 0 ? [{ id: 10 }] : [], total: 3, quarantined: aside };
    };
    await expect(paginate(fetch, { fn: 'runs.list', pageSize: 2 })).rejects.toThrow(/id 9 came twice/);
  });

  it('pageStream hands them on page by page', async () => {
    const q = new Quarantine();
    const m = listWithBad(100, new Set([90, 20]));
    const seen: number[] = [];
    for await (const page of pageStream(m.fetch, { fn: 'runs.list', pageSize: 50, quarantine: q })) {
      seen.push(page.items.length);
      if (seen.length === 1) expect(q.records().map((r) => r.id)).toEqual([90]);
    }
    expect(seen).toEqual([49, 49]);
    expect(q.records().map((r) => r.id)).toEqual([90, 20]);
  });
});

describe('compiledSchema: zod compiled, answering as its runtime parser does', () => {
  // Every field of a URL record missing, or null, or of each other JSON type; and one field more.
  // Also what JSON.parse can make of a hostile answer: 1e400 is Infinity, -0, an integer past 2^53,
  // a NUL, and keys such as __proto__ and constructor as own properties.
  const odd: unknown[] = [undefined, null, 0, -1.5, '', 'x', true, {}, [], ['a']];
  odd.push(...(JSON.parse('[1e400, -0, 9007199254740993, "\\u0000", {"__proto__": {"id": 1}}]') as unknown[]));
  const records: unknown[] = [URL_RECORD, { ...URL_RECORD, extra: { nested: [1, 2] } }, null, [], 'url'];
  for (const key of ['__proto__', 'constructor', 'toString'])
    records.push(JSON.parse(JSON.stringify(URL_RECORD).replace('{', `{"${key}": {"id": "x"},`)));
  for (const field of Object.keys(URL_RECORD)) for (const value of odd) records.push({ ...URL_RECORD, [field]: value });

  it.each([
    ['a URL record', urlRecordSchema],
    ['a view of it', urlRecordSchema.pick({ id: true, ssl_status: true, ssl_expires_at: true })],
  ])('%s: the same data, or the same issues', (_name, schema) => {
    const compiled = compiledSchema(schema);
    expect(compiled).not.toBe(schema);
    expect(compiledSchema(schema)).toBe(compiled);
    for (const record of records) {
      const runtime = schema.safeParse(record);
      const fast = compiled.safeParse(record);
      expect(fast.success, JSON.stringify(record)).toBe(runtime.success);
      if (runtime.success) expect(fast.data).toEqual(runtime.data);
      else expect(fast.error!.issues).toEqual(runtime.error.issues);
    }
  });
});
