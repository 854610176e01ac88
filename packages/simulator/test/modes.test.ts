import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator, type RunningSimulator } from '../src/index.js';
import { ALT_VOCABULARY } from '../src/state-words.js';
import type { TimeFormat } from '../src/time-format.js';
import { PLANS_WITH_LOGS } from '../src/vocabulary.js';
import { apiGet, simControl, useSimulator } from '../../../test/helpers/simulator.js';

/** A start time with milliseconds, so formats that write them only when there are some are seen doing both. */
const clock = new ManualClock('2026-11-24T08:00:00.250Z');

describe('maximum limit', async () => {
  const sim = await useSimulator({ apps: 20, clock, maxLimit: 100 });
  const logApp = [...sim.control.state.apps.values()].find(
    (a) => a.state === 'running' && PLANS_WITH_LOGS.includes(sim.control.state.projectOf(a).plan),
  )!;

  it.each([
    ['apps.list', '/apps?limit=101', 100],
    ['runs.list', '/runs?limit=5000', 100],
    ['restore_points.list', '/apps/1/restore-points?limit=101', 100],
    ['logs.tail (its default 200 stays allowed)', `/apps/${logApp.id}/logs?limit=201`, 200],
  ])('refuses %s above the maximum with invalid_parameter naming it', async (_fn, path, max) => {
    const res = await apiGet(sim, path);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_parameter');
    expect(res.body.error.message).toContain(`at most ${max}`);
  });

  it.each([
    ['apps.list at the maximum', '/apps?limit=100'],
    ['logs.tail with its default limit', `/apps/${logApp.id}/logs`],
    ['logs.tail at 200', `/apps/${logApp.id}/logs?limit=200`],
  ])('answers %s', async (_what, path) => {
    expect((await apiGet(sim, path)).status).toBe(200);
  });

  it('changes at run time through the control interface, and refuses a bad maximum', async () => {
    expect((await simControl(sim, 'setMaxLimit', [10])).status).toBe(200);
    expect((await apiGet(sim, '/apps?limit=11')).body.error.message).toContain('at most 10');
    expect((await apiGet(sim, '/apps?limit=10')).status).toBe(200);
    const bad = await simControl(sim, 'setMaxLimit', [0]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/maxLimit must be an integer of at least 1/);
    await simControl(sim, 'setMaxLimit', [100]);
  });

  it('keeps 1000 as the default maximum', async () => {
    const own = await startSimulator({ apps: 2, clock });
    try {
      expect((await apiGet(own, '/apps?limit=1000')).status).toBe(200);
      expect((await apiGet(own, '/apps?limit=1001')).body.error.message).toContain('at most 1000');
    } finally {
      await own.close();
    }
  });
});

/** `2026-11-24T08:00:00.123Z`, with a space, more digits, an offset or no zone: the instant, read strictly. */
const STAMP = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?$/;
function instantOf(stamp: string): number {
  const m = STAMP.exec(stamp);
  if (!m) throw new Error(`not a timestamp: ${stamp}`);
  const [, y, mo, d, h, mi, s, fraction = '', zone = 'Z'] = m;
  const wall = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!, Number(fraction.padEnd(3, '0').slice(0, 3)));
  if (zone === 'Z') return wall;
  const sign = zone.startsWith('-') ? -1 : 1;
  return wall - sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
}

/** Every timestamp field of an answer, by its path: `…_at`, `at`, `kept_until`, `time`, `since`. */
function stamps(value: unknown, path = ''): [string, string][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => stamps(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]): [string, string][] =>
    typeof v === 'string' && /(^|_)at$|_until$|^time$|^since$/.test(k)
      ? [[`${path}.${k}`, v]]
      : stamps(v, `${path}.${k}`),
  );
}

const FORMAT_SHAPES: Record<Exclude<TimeFormat, 'mixed'>, RegExp> = {
  iso: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
  'iso-ms': /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/,
  offset: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?[+-](?!00:00)\d\d:\d\d$/,
  space: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{3})?(Z|[+-]\d\d:\d\d)$/,
  zoneless: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?$/,
};
const shapeOf = (stamp: string) =>
  (Object.keys(FORMAT_SHAPES) as (keyof typeof FORMAT_SHAPES)[]).find((f) => FORMAT_SHAPES[f].test(stamp));

describe('time formats', async () => {
  const sim = await useSimulator({ apps: 30, seed: 4, clock });
  const state = sim.control.state;
  const upgrading = [...state.apps.values()].find((a) => a.upgrade !== null)!;
  const logApp = [...state.apps.values()].find(
    (a) => a.state === 'running' && PLANS_WITH_LOGS.includes(state.projectOf(a).plan),
  )!;
  const failedRun = [...state.runs.values()].find((r) => r.state === 'error')!;
  const updated = [...state.restorePoints.values()].find((p) => p.keptUntil !== null)!;
  /** Every function with a timestamp in its answer. */
  const paths = [
    '/apps?limit=30',
    `/apps/${upgrading.id}`,
    '/urls?limit=100',
    '/backups?limit=100',
    '/backups/1',
    '/runs?limit=100',
    `/runs/${failedRun.id}`,
    `/apps/${updated.appId}/restore-points`,
    `/apps/${logApp.id}/logs?since=10m`,
    '/attention',
  ];
  const read = async (format: TimeFormat) => {
    expect((await simControl(sim, 'setTimeFormat', [format])).status).toBe(200);
    const answers = await Promise.all(paths.map(async (p) => stamps((await apiGet(sim, p)).body.data, p)));
    await simControl(sim, 'setTimeFormat', ['iso']);
    return answers.flat();
  };
  const reference = await read('iso');

  it('reads timestamps from every kind of answer (the comparison below covers them all)', () => {
    const fields = new Set(reference.map(([path]) => path.replace(/\[\d+\]/g, '[]').replace(/^\/[^.]*/, '')));
    for (const field of [
      '.items[].deployed_at',
      '.last_backup_at',
      '.urls[].ssl_expires_at',
      '.repositories[].checked_at',
      '.items[].taken_at',
      '.offsite[].uploaded_at',
      '.items[].created_at',
      '.steps[].started_at',
      '.items[].at',
      '.items[].kept_until',
      '.items[].time',
      '.sections[].items[].since',
    ]) {
      expect(
        [...fields].some((f) => f.endsWith(field)),
        field,
      ).toBe(true);
    }
    expect(
      reference.some(([, s]) => !s.endsWith('.000Z')),
      'some instants carry milliseconds',
    ).toBe(true);
  });

  it.each(Object.keys(FORMAT_SHAPES) as (keyof typeof FORMAT_SHAPES)[])(
    'writes every timestamp as %s, each the same instant as iso',
    async (format) => {
      const written = await read(format);
      expect(written.map(([path]) => path)).toEqual(reference.map(([path]) => path));
      written.forEach(([path, stamp], i) => {
        expect(stamp, path).toMatch(FORMAT_SHAPES[format]);
        expect(instantOf(stamp), `${path}: ${stamp}`).toBe(Date.parse(reference[i]![1]));
      });
    },
  );

  it.each([
    ['offset', /[+-]\d\d:\d\d$/],
    ['space', /(Z|[+-]\d\d:\d\d)$/],
  ] as const)('varies the zone in %s', async (format, zone) => {
    const zones = new Set((await read(format)).map(([, s]) => zone.exec(s)![0]));
    expect(zones.size).toBeGreaterThanOrEqual(format === 'offset' ? 4 : 3);
  });

  it('mixes the zoned formats in one answer (mixed), each the same instant', async () => {
    const written = await read('mixed');
    const apps = written.filter(([path]) => path.startsWith('/apps?'));
    expect(new Set(apps.map(([, s]) => shapeOf(s))).size).toBe(4);
    written.forEach(([path, stamp], i) => {
      expect(['iso', 'iso-ms', 'offset', 'space'], path).toContain(shapeOf(stamp));
      expect(instantOf(stamp), `${path}: ${stamp}`).toBe(Date.parse(reference[i]![1]));
    });
  });

  it('writes an instant the same way on every read (the choice is seeded, not drawn per request)', async () => {
    expect(await read('mixed')).toEqual(await read('mixed'));
  });

  it('takes the format as a start option, and refuses an unknown one', async () => {
    const own = await startSimulator({ apps: 3, clock, timeFormat: 'space' });
    try {
      const written = stamps((await apiGet(own, '/apps')).body.data);
      expect(written.length).toBeGreaterThan(0);
      for (const [, s] of written) expect(s).toMatch(FORMAT_SHAPES.space);
    } finally {
      await own.close();
    }
    await expect(startSimulator({ apps: 1, timeFormat: 'rfc2822' as TimeFormat })).rejects.toThrow(
      /timeFormat must be one of iso, iso-ms, offset, space, mixed, zoneless/,
    );
    expect((await simControl(sim, 'setTimeFormat', ['local'])).body.error.message).toMatch(/timeFormat must be one of/);
  });
});

describe('rate limit', () => {
  /** Fires `n` requests at once with a token; answers their responses. */
  const burst = (sim: RunningSimulator, n: number, token = sim.adminToken) =>
    Promise.all(Array.from({ length: n }, () => apiGet(sim, '/whoami', token)));
  const statuses = (answers: { status: number }[]) => answers.map((a) => a.status).sort();

  describe('with a ManualClock: buckets refill only as simulated time moves', async () => {
    const manual = new ManualClock('2026-11-24T08:00:00Z');
    const sim = await useSimulator({
      apps: 5,
      clock: manual,
      rateLimit: { rps: 2, burst: 3 },
      tokens: [{ token: 'second-token', namespaces: '*', permissions: '*' }],
    });

    it('lets a burst through and refuses the rest with 429 rate_limited and Retry-After in seconds', async () => {
      const answers = await burst(sim, 10);
      expect(statuses(answers)).toEqual([200, 200, 200, ...Array(7).fill(429)]);
      const refused = answers.find((a) => a.status === 429)!;
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.headers.get('retry-after')).toBe('1');
    });

    it('keeps one bucket per token', async () => {
      expect(statuses(await burst(sim, 4, 'second-token'))).toEqual([200, 200, 200, 429]);
    });

    it('refills at the rate as time moves, up to the burst', async () => {
      manual.advance(1_000);
      expect(statuses(await burst(sim, 4))).toEqual([200, 200, 429, 429]);
      sim.control.advance(60_000);
      expect(statuses(await burst(sim, 5))).toEqual([200, 200, 200, 429, 429]);
    });

    it('logs refusals and leaves the control interface and the OpenAPI document unlimited', async () => {
      sim.control.resetRequests();
      await burst(sim, 2);
      expect(sim.control.requests().map((r) => [r.fn, r.status])).toEqual([
        ['whoami', 429],
        ['whoami', 429],
      ]);
      expect((await simControl(sim, 'stats')).status).toBe(200);
      expect((await fetch(`${sim.baseUrl}/api/v1/openapi.json`)).status).toBe(200);
    });

    it.each([
      ['seconds', (h: string | null) => expect(h).toBe('5')],
      [
        'date',
        (h: string | null) => expect(Date.parse(h!)).toBe(Math.floor((sim.control.now() + 5_000) / 1000) * 1000),
      ],
      ['none', (h: string | null) => expect(h).toBeNull()],
    ] as const)('says when to come back as %s (set at run time)', async (retryAfter, check) => {
      expect((await simControl(sim, 'setRateLimit', [{ rps: 0.2, burst: 1, retryAfter }])).status).toBe(200);
      const answers = await burst(sim, 3);
      expect(statuses(answers)).toEqual([200, 429, 429]);
      for (const a of answers.filter((x) => x.status === 429)) check(a.headers.get('retry-after'));
    });

    it('is switched off with null, and refuses a bad spec', async () => {
      await simControl(sim, 'setRateLimit', [null]);
      expect(statuses(await burst(sim, 20))).toEqual(Array(20).fill(200));
      const bad = await simControl(sim, 'setRateLimit', [{ rps: 0 }]);
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toMatch(/rateLimit.rps must be a number above 0/);
    });
  });

  it('refuses requests fired faster than the rate with the system clock', async () => {
    // 0.01 requests a second: nothing refills while the test runs.
    const sim = await startSimulator({ apps: 3, rateLimit: { rps: 0.01, burst: 2, retryAfter: 'seconds' } });
    try {
      const answers = await burst(sim, 30);
      expect(statuses(answers)).toEqual([200, 200, ...Array(28).fill(429)]);
      expect(Number(answers.find((a) => a.status === 429)!.headers.get('retry-after'))).toBeGreaterThan(90);
    } finally {
      await sim.close();
    }
  });
});

describe('state words', async () => {
  const twin = { apps: 60, seed: 9, clock };
  const usual = await useSimulator(twin);
  const alt = await useSimulator({ ...twin, stateWords: 'alt' });
  const state = alt.control.state;
  const upgrading = [...state.apps.values()].find((a) => a.upgrade !== null)!;
  // The same change on both twins: one server unreachable, which this seed has none of.
  for (const sim of [usual, alt]) sim.control.checks.servers.setState([...state.servers.keys()][0]!, 'unreachable');
  /** Every `state` of the answers that carry one, by the kind of record it belongs to. */
  const statesOf = async (sim: RunningSimulator): Promise<Record<keyof typeof ALT_VOCABULARY, string[]>> => {
    type Item = Record<string, any>;
    const get = async (path: string): Promise<Item> => (await apiGet(sim, path)).body.data;
    const runs = (await get('/runs?limit=1000')).items;
    const steps: Item[] = (await Promise.all(runs.slice(0, 150).map((r: Item) => get(`/runs/${r.id}`)))).flatMap(
      (r) => r.steps,
    );
    const backups = (await get('/backups?limit=1000')).items;
    return {
      run: runs.map((r: Item) => r.state),
      step: steps.map((s: Item) => s.state),
      app: (await get('/apps?limit=1000&include_deleted=true')).items.map((a: Item) => a.state),
      backup: backups.map((b: Item) => b.state),
      offsite: backups.flatMap((b: Item) => b.offsite.map((o: Item) => o.state)),
      server: (await get('/servers?include_deleted=true')).items.map((s: Item) => s.state),
      installer: (await get('/installers?include_deleted=true')).items.map((i: Item) => i.state),
      url: (await get(`/apps/${upgrading.id}`)).urls.map((u: Item) => u.state),
      upgrade: [(await get(`/apps/${upgrading.id}`)).upgrade.state],
    };
  };

  it('writes every state field in the other vocabulary, word for word', async () => {
    const [before, after] = await Promise.all([statesOf(usual), statesOf(alt)]);
    for (const kind of Object.keys(ALT_VOCABULARY) as (keyof typeof ALT_VOCABULARY)[]) {
      const words = ALT_VOCABULARY[kind] as Record<string, string>;
      expect(after[kind].length, kind).toBeGreaterThan(0);
      expect(after[kind], kind).toEqual(before[kind].map((w) => words[w] ?? w));
      expect(
        after[kind].every((w) => Object.values(words).includes(w)),
        `${kind}: ${after[kind].join(',')}`,
      ).toBe(true);
    }
  });

  it.each([
    ['runs', 'failed', 'error'],
    ['runs', 'in_progress', 'running'],
    ['servers', 'down', 'unreachable'],
    ['apps', 'active', 'running'],
  ])(
    'filters %s by state in its words (state=%s finds what the default calls %s), and finds nothing by the default word',
    async (list, word, usualWord) => {
      const expected = (await apiGet(usual, `/${list}?limit=1000&state=${usualWord}`)).body.data.total;
      expect(expected).toBeGreaterThan(0);
      expect((await apiGet(alt, `/${list}?limit=1000&state=${word}`)).body.data.total).toBe(expected);
      expect((await apiGet(alt, `/${list}?limit=1000&state=${usualWord}`)).body.data.total).toBe(0);
    },
  );

  it('finds the same problems whatever words it writes (attention reads the records)', async () => {
    expect((await apiGet(alt, '/attention')).body.data).toEqual((await apiGet(usual, '/attention')).body.data);
  });

  it('refuses an unknown vocabulary', async () => {
    await expect(startSimulator({ apps: 1, stateWords: 'klingon' as 'alt' })).rejects.toThrow(
      /stateWords must be one of default, alt/,
    );
  });
});
