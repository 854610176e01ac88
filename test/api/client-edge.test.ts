/**
 * The client against a service that differs from our simulator's defaults wherever the reference
 * is silent, and against hostile answers: other timestamp formats, a lower maximum `limit`, huge,
 * endless and dense answers, lists that never end, the token echoed back. Real HTTP on loopback
 * to the simulator in each of those modes.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient, smallerPageSize, type ApiClientOptions } from '../../src/api/client.js';
import { ApiListTooLongError, ApiResponseError } from '../../src/api/errors.js';
import { jsonValueBound } from '../../src/api/answer-bounds.js';
import { Secret } from '../../src/lib/secret.js';
import { parseTime } from '../../src/lib/parse-time.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { useSimulator } from '../helpers/simulator.js';
import { captureLogs } from './log-capture.js';

const clock = new ManualClock('2026-11-24T08:00:00Z');
const sim = await useSimulator({ apps: 60, seed: 12, clock });
const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((c) => c())));
afterEach(() => {
  sim.control.clearFaults();
  sim.control.setTimeFormat('iso');
  sim.control.setMaxLimit(1000);
  sim.control.resetRequests();
});

function client(over: Partial<ApiClientOptions> = {}) {
  const logs = captureLogs();
  const c = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    clock,
    requestsPerSecond: Infinity,
    maxRetries: 0,
    logger: logs.logger,
    ...over,
  });
  closers.push(() => c.close());
  return { c, logs };
}

/** Every timestamp field of what the estate's main lists answer, as instants, by record. */
async function instants(c: ReturnType<typeof client>['c']): Promise<Record<string, number | null>> {
  const out: Record<string, number | null> = {};
  for (const app of await c.apps.listAll()) {
    for (const f of ['deployed_at', 'updated_at', 'last_backup_at'] as const)
      out[`app ${app.id} ${f}`] = parseTime(app[f]);
  }
  for (const url of await c.urls.listAll()) {
    for (const f of ['ssl_expires_at', 'public_checked_at'] as const) out[`url ${url.id} ${f}`] = parseTime(url[f]);
  }
  for (const run of (await c.runs.list({ limit: 200 })).items) {
    for (const f of ['created_at', 'updated_at'] as const) out[`run ${run.id} ${f}`] = parseTime(run[f]);
  }
  for (const b of (await c.backups.list({ limit: 200 })).items) {
    out[`backup ${b.id} taken_at`] = parseTime(b.taken_at);
    b.offsite.forEach((o, i) => (out[`backup ${b.id} offsite ${i}`] = parseTime(o.uploaded_at)));
  }
  return out;
}

describe('timestamps the reference leaves open', () => {
  it.each(['iso-ms', 'offset', 'space', 'mixed'] as const)(
    'reads %s timestamps as the same instants as ISO with Z',
    async (format) => {
      const { c } = client();
      const expected = await instants(c);
      expect(Object.values(expected).filter((v) => v !== null).length).toBeGreaterThan(200);
      sim.control.setTimeFormat(format);
      expect(await instants(c)).toEqual(expected);
    },
  );

  it('refuses a timestamp without a zone, naming the field and the record, rather than guessing one', async () => {
    const { c } = client();
    sim.control.setTimeFormat('zoneless');
    const err = await c.apps.list({ limit: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ problem: 'schema' });
    expect((err as ApiResponseError).detail).toMatch(
      /^items\[0\]\(id \d+\)\.\w+: timestamp "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?" has no time zone \(Z or ±hh:mm\); it is not guessed; set api\.zoneless_timestamps: utc if the service writes its times in UTC/,
    );
  });

  it('reads timestamps without a zone as UTC when told so (api.zoneless_timestamps: utc): the same instants', async () => {
    const expected = await instants(client().c);
    sim.control.setTimeFormat('zoneless');
    expect(await instants(client({ zonelessTimestamps: 'utc' }).c)).toEqual(expected);
  });
});

describe('a service with a lower maximum limit', () => {
  it.each([
    [500, 'limit must be at most 200', 200],
    [200, 'limit too large', 100],
    [100, 'invalid limit', 50],
    [60, 'limit must be at most 40', 50], // below the reference's 50: not believed
    [50, 'limit must be at most 40', undefined], // 50 is always taken: a refusal of it is something else
    [1000, 'limit 1000 is above 250', 250],
  ])('after %i is refused with "%s", asks for %s', (refused, message, next) => {
    expect(smallerPageSize(refused, message)).toBe(next);
  });

  it('reads every list on its defaults from a service whose maximum is 50, learning it once per function with one warning', async () => {
    const whole = await client().c.apps.listAll();
    sim.control.setMaxLimit(50);
    const { c, logs } = client({ pageSize: 500 });
    sim.control.resetRequests();
    expect(await c.apps.listAll()).toEqual(whole);
    const limits = sim.control.requests().map((r) => [r.status, new URLSearchParams(r.query).get('limit')]);
    expect(limits[0]).toEqual([400, '500']);
    expect(limits.slice(1).every(([status, limit]) => status === 200 && limit === '50')).toBe(true);
    // Kept for the function: the next walk asks for 50 at once.
    sim.control.resetRequests();
    await c.apps.listAll();
    expect(sim.control.requests().every((r) => r.status === 200)).toBe(true);
    await c.urls.listAll();
    // One warning says what to set; the next list that learns the same size says it at debug.
    const warnings = logs.records().filter((r) => r.level === 40);
    expect(warnings.map((w) => w.fn)).toEqual(['apps.list']);
    expect(String(warnings[0]!.msg)).toContain('Set api.page_size: 50');
    expect(
      logs
        .records()
        .filter((r) => r.level === 20 && r.fn === 'urls.list' && String(r.msg).includes('Set api.page_size: 50')),
    ).toHaveLength(1);
  });
});

describe('answers too large to hold', () => {
  it.each([
    ['a huge body', { hugeMb: 3 }, /answer too large \(HTTP 200\): more than 2 MiB \(api\.max_answer_size\)/],
    ['an endless body', { endless: true }, /answer too large \(HTTP 200\): more than 2 MiB \(api\.max_answer_size\)/],
    [
      'a dense body of tiny values',
      { hugeMb: 1.5, hugeDense: true },
      /answer too large \(HTTP 200\): more than 100000 JSON values \(api\.max_answer_values\)/,
    ],
  ])('refuses %s with "answer too large", and the next answer reads', async (_what, fault, message) => {
    const { c } = client({ maxAnswerBytes: 2 * 1024 * 1024, maxAnswerValues: 100_000 });
    sim.control.setFault('apps.list', fault);
    const err = await c.apps.list({ limit: 5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect((err as ApiResponseError).problem).toBe('too_large');
    expect((err as Error).message).toMatch(message);
    sim.control.clearFaults();
    expect((await c.apps.list({ limit: 5 })).items).toHaveLength(5);
    expect(sim.control.stats().streams).toBe(0);
  });

  it('counts JSON values only as far as the bound', () => {
    expect(jsonValueBound('{"a":[1,2,{"b":3}]}', 100)).toBe(5);
    expect(jsonValueBound('[0,0,0,0,0,0]', 3)).toBe(4);
  });
});

describe('lists that never end', () => {
  it('refuses a list read whole whose total is past the bound, at its first page', async () => {
    const { c } = client({ maxListItems: 5_000 });
    sim.control.setFault('urls.list', { endlessList: true });
    const err = await c.urls.listAll().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiListTooLongError);
    expect((err as Error).message).toMatch(
      /list too long: total says 1000000000, more than 5000; raise api\.max_list_items/,
    );
    expect(sim.control.requests()).toHaveLength(1);
  });

  it('ends a walk that reads newest first once it has read more than the bound', async () => {
    const { c } = client({ maxListItems: 2_000, pageSize: 500 });
    sim.control.setFault('runs.list', { endlessList: true });
    const err = await c.runs.listAll({}, { until: () => false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiListTooLongError);
    expect((err as Error).message).toMatch(/more than 2000 items read in one walk/);
    expect(sim.control.requests().length).toBeLessThanOrEqual(6);
  });
});

describe('the token echoed back', () => {
  it.each(['apps.list', 'runs.list', 'urls.list'] as const)(
    'is scrubbed from %s: from the records, the errors and the logs',
    async (fn) => {
      const { c, logs } = client();
      sim.control.setFault(fn, { echoToken: true });
      const read =
        fn === 'apps.list'
          ? c.apps.list({ limit: 5 })
          : fn === 'runs.list'
            ? c.runs.list({ limit: 5 })
            : c.urls.list({ limit: 5 });
      const err = await read.catch((e: unknown) => e);
      // The token as an id does not fit the schema: the error names the record by it, scrubbed.
      expect(err).toBeInstanceOf(ApiResponseError);
      expect((err as ApiResponseError).detail).toContain('items[0](id <secret>)');
      const everything = `${(err as Error).message} ${JSON.stringify(err)} ${logs.lines.join('')}`;
      expect(everything).not.toContain(sim.adminToken);
    },
  );

  it("is scrubbed from a refusal's message and from free text that reads", async () => {
    const { c } = client();
    sim.control.setFault('apps.get', { echoToken: true, errorCode: 'internal_error' });
    const refusal = await c.apps.get(1).catch((e: unknown) => e);
    expect((refusal as Error).message).toContain('<secret>');
    expect((refusal as Error).message).not.toContain(sim.adminToken);
  });
});

describe('a replayed change', () => {
  it('is reported as the service marks it (Idempotent-Replayed), and only then', async () => {
    const { c } = client();
    const app = (await c.apps.list({ limit: 50 })).items.find(
      (a) => a.environment_type === 'staging' && a.state === 'running',
    )!;
    const seen: { status: number; replayed: boolean }[] = [];
    const key = `edge-replay-${app.id}`;
    const first = await c.apps.backup(
      app.id,
      { format: 'zip' },
      { idempotencyKey: key, onAnswer: (a) => seen.push(a) },
    );
    const again = await c.apps.backup(
      app.id,
      { format: 'zip' },
      { idempotencyKey: key, onAnswer: (a) => seen.push(a) },
    );
    expect(again).toEqual(first);
    expect(seen).toEqual([
      { status: 200, replayed: false },
      { status: 200, replayed: true },
    ]);
  });
});

describe('the token echoed back in escaped form', () => {
  it('is scrubbed when JSON escapes spell it (a token with a quote comes back as \\")', async () => {
    const token = 'tok"en-5c1d-with-a-quote';
    const own = await useSimulator({ apps: 5, seed: 3, adminToken: token });
    const logs = captureLogs();
    const c = createApiClient({
      baseUrl: own.baseUrl,
      token: new Secret(token),
      clock,
      requestsPerSecond: Infinity,
      maxRetries: 0,
      logger: logs.logger,
    });
    closers.push(() => c.close());
    own.control.setFault('apps.get', { echoToken: true, errorCode: 'internal_error' });
    const refusal = await c.apps.get(1).catch((e: unknown) => e);
    expect((refusal as Error).message).toContain('<secret>');
    expect(JSON.stringify(refusal)).not.toMatch(/tok\\?"en/);
    own.control.setFault('runs.list', { echoToken: true });
    const err = await c.runs.list({ limit: 3 }).catch((e: unknown) => e);
    expect(`${(err as Error).message} ${JSON.stringify(err)} ${logs.lines.join('')}`).not.toMatch(/tok\\?"en/);
  });
});

/** A client of a simulator whose token is `token`, with `webhook` as the config's other secret. */
function echoClient(baseUrl: string, token: string, webhook: string, logger?: ApiClientOptions['logger']) {
  const c = createApiClient({
    baseUrl,
    token: new Secret(token),
    otherSecrets: [new Secret(webhook)],
    clock,
    requestsPerSecond: Infinity,
    maxRetries: 0,
    logger,
  });
  closers.push(() => c.close());
  return c;
}

describe('secrets echoed back spelled in escapes, as keys too', () => {
  it('are scrubbed from keys and values alike: the token and every other secret of the config', async () => {
    const token = 'tok-2b7f-escaped-echo-91ce';
    const webhook = 'https://hooks.example.com/services/T000/B000/escaped-webhook-path';
    const own = await useSimulator({ apps: 20, seed: 3, adminToken: token });
    const c = echoClient(own.baseUrl, token, webhook);
    const fault = { echoToken: true, echoText: webhook, echoEscaped: true, times: 1 };
    // As the service sends it: no secret as text, only escapes that spell it.
    own.control.setFault('attention.list', fault);
    const sent = await (
      await fetch(`${own.baseUrl}/api/v1/attention`, { headers: { authorization: `Bearer ${token}` } })
    ).text();
    expect(sent).not.toContain(token);
    expect(sent).not.toContain('escaped-webhook-path');
    expect(JSON.stringify(JSON.parse(sent))).toContain(token);
    // Attention items are open records, kept whole: the key reached alerts, events and messages.
    own.control.setFault('attention.list', fault);
    const answer = JSON.stringify(await c.attention.list());
    expect(answer).toContain('"extra":{"<secret>":"echoed"');
    expect(answer).not.toContain(token);
    expect(answer).not.toContain('escaped-webhook-path');
  });
});

describe('secrets echoed in a list page', () => {
  // A page is parsed item by item only when no secret can be in it (`parse-page.ts`): one that
  // holds one, as text or in escapes, is read whole and scrubbed as every answer is.
  it.each([
    ['as text', false],
    ['spelled in escapes', true],
  ])('are scrubbed from what the page answer says, %s', async (_how, echoEscaped) => {
    const token = `tok-5e1a-${echoEscaped ? 'escaped' : 'plain'}-page`;
    const webhook = 'https://hooks.example.com/services/T000/B000/page-echo-path';
    const own = await useSimulator({ apps: 20, seed: 4, adminToken: token });
    const logs = captureLogs();
    const c = echoClient(own.baseUrl, token, webhook, logs.logger);
    own.control.setFault('runs.list', { echoToken: true, echoText: webhook, echoEscaped, times: 1 });
    const err = await c.runs.list({ limit: 50 }).catch((e: unknown) => e);
    // The first record's id was the token: the answer fails naming the record by it, scrubbed.
    expect(err).toBeInstanceOf(ApiResponseError);
    expect((err as ApiResponseError).detail).toContain('items[0](id <secret>)');
    const everything = `${(err as Error).message} ${JSON.stringify(err)} ${logs.lines.join('')}`;
    expect(everything).not.toContain(token);
    expect(everything).not.toContain('page-echo-path');
    // The next page, with nothing echoed, reads as ever.
    expect((await c.runs.list({ limit: 50 })).items.length).toBeGreaterThan(0);
  });
});
