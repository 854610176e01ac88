/**
 * How the client meets a misbehaving service (simulator faults over loopback): rate limiting with
 * and without Retry-After, proxy HTML pages, broken and mistyped JSON, hanging requests, deadlines,
 * aborts, refused connections; and that changes are never retried.
 *
 * The client runs on a JumpingClock (shared with the simulator, so an HTTP-date Retry-After means
 * the same instant to both): its waits are instant and recorded, and tests assert the waits the
 * client chose, never how long anything took.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiAttempt, type ApiClientOptions } from '../../src/api/client.js';
import { ApiError, ApiResponseError, ApiTransportError } from '../../src/api/errors.js';
import { Secret } from '../../src/lib/secret.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';
import { captureLogs } from './log-capture.js';

const clock = new JumpingClock();
const sim = await useSimulator({ apps: 20, seed: 2, clock });
const state = sim.control.state;
const appId = [...state.apps.values()].find((a) => a.state === VOCABULARY.app.running && !a.upgrade)!.id;

const closers: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(closers.map((c) => c())));
afterEach(() => sim.control.clearFaults());

/** A client with small delays and no client-side rate limit unless a test asks for one. */
function client(over: Partial<ApiClientOptions> = {}) {
  const logs = captureLogs();
  const attempts: ApiAttempt[] = [];
  const c = createApiClient({
    baseUrl: sim.baseUrl,
    token: new Secret(sim.adminToken),
    clock,
    requestsPerSecond: Infinity,
    maxRetries: 3,
    timeoutMs: 2_000,
    retry: { baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.5 },
    logger: logs.logger,
    observer: (a) => attempts.push(a),
    ...over,
  });
  closers.push(() => c.close());
  return { c, logs, attempts };
}

/** Runs `act` with a fresh request log and clock record; returns the requests the simulator saw. */
async function observed<T>(
  act: () => Promise<T>,
): Promise<{ result: T | undefined; error: unknown; requests: [string, number][]; sleeps: number[] }> {
  sim.control.resetRequests();
  clock.sleeps.length = 0;
  let result: T | undefined;
  let error: unknown;
  try {
    result = await act();
  } catch (err) {
    error = err;
  }
  return { result, error, requests: sim.control.requests().map((r) => [r.fn, r.status]), sleeps: [...clock.sleeps] };
}

describe('429 rate_limited', () => {
  it('waits the Retry-After seconds, then succeeds', async () => {
    const { c, logs } = client();
    sim.control.setFault('apps.list', { rateLimit: { retryAfter: 'seconds', seconds: 3 }, times: 1 });
    const o = await observed(() => c.apps.list({ limit: 2 }));
    expect(o.error).toBeUndefined();
    expect(o.result!.items).toHaveLength(2);
    expect(o.requests).toEqual([
      ['apps.list', 429],
      ['apps.list', 200],
    ]);
    expect(o.sleeps).toEqual([3_000]);
    expect(logs.records().filter((r) => r.msg === 'api read failed; retrying')).toMatchObject([
      { level: 40, fn: 'apps.list', attempt: 1, reason: 'rate_limited', delayMs: 3_000 },
    ]);
  });

  it('waits until the Retry-After HTTP-date, then succeeds', async () => {
    const { c } = client();
    sim.control.setFault('runs.list', { rateLimit: { retryAfter: 'date', seconds: 4 }, times: 1 });
    const o = await observed(() => c.runs.list({ limit: 1 }));
    expect(o.error).toBeUndefined();
    expect(o.requests).toEqual([
      ['runs.list', 429],
      ['runs.list', 200],
    ]);
    // An HTTP-date has whole seconds: the wait is up to 1 s shorter than 4 s, never longer.
    expect(o.sleeps).toHaveLength(1);
    expect(o.sleeps[0]).toBeGreaterThan(3_000);
    expect(o.sleeps[0]).toBeLessThanOrEqual(4_000);
  });

  it('backs off when there is no Retry-After: every request waits 1 s, then 2 s, and the retry waits its jitter within that', async () => {
    const { c } = client();
    sim.control.setFault('backups.list', { rateLimit: { retryAfter: 'none' }, times: 2 });
    const o = await observed(() => c.backups.list({ limit: 1 }));
    expect(o.error).toBeUndefined();
    expect(o.requests).toEqual([
      ['backups.list', 429],
      ['backups.list', 429],
      ['backups.list', 200],
    ]);
    // The retry's own jitter (random() = 0.5 of a cap of 100 ms, then 200 ms), then the rest of
    // the pause every request now keeps: 1 s after the first 429, 2 s after the second.
    expect(o.sleeps).toEqual([50, 950, 100, 1_900]);
  });

  it('halves the rate after a 429 without Retry-After, says once what to set, and doubles it back after a quiet minute', async () => {
    const { c, logs } = client({ requestsPerSecond: 8 });
    sim.control.setFault('servers.list', { rateLimit: { retryAfter: 'none' }, times: 2 });
    await observed(() => c.servers.list());
    const warnings = logs.records().filter((l) => l.level === 40 && String(l.msg).includes('429 without Retry-After'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ fn: 'servers.list', pauseMs: 1_000, requestsPerSecond: 4 });
    expect(String(warnings[0]!.msg)).toContain('set api.requests_per_second');
    const waited = async (n: number) => {
      const o = await observed(async () => {
        for (let i = 0; i < n; i++) await c.servers.list({ limit: 1 });
      });
      expect(o.error).toBeUndefined();
      return o.sleeps.reduce((a, b) => a + b, 0);
    };
    // After the second 429 the rate is 2/s (at the configured 8/s, ten requests wait about 250 ms).
    expect(await waited(10)).toBeGreaterThanOrEqual(3_500);
    // A quiet minute later it is up a step (4/s): eight requests wait 6 × 250 ms after the two the
    // bucket held; a minute after that it is back to the configured 8/s, and they wait less again.
    await clock.sleep(61_000);
    expect(await waited(8)).toBe(1_500);
    await clock.sleep(61_000);
    expect(await waited(8)).toBeLessThan(1_500);
  });

  it('halves the rate after a 429 with Retry-After too: the service named its wait, not its rate', async () => {
    const { c, logs } = client({ requestsPerSecond: 8 });
    sim.control.setFault('servers.list', { rateLimit: { retryAfter: 'seconds', seconds: 1 }, times: 1 });
    const first = await observed(() => c.servers.list({ limit: 1 }));
    expect(first.error).toBeUndefined();
    expect(first.sleeps).toEqual([1_000]);
    const warnings = logs
      .records()
      .filter((l) => l.level === 40 && String(l.msg).startsWith('the service answered 429'));
    expect(warnings).toMatchObject([{ fn: 'servers.list', pauseMs: 1_000, requestsPerSecond: 4 }]);
    // At 4/s, the ten requests after the retry wait 250 ms each; at the configured 8/s most would
    // not wait at all (the bucket refilled), and a service that asked for the pause because it
    // takes fewer would refuse them again, until the retries run out and the read fails.
    const next = await observed(async () => {
      for (let i = 0; i < 10; i++) await c.servers.list({ limit: 1 });
    });
    expect(next.error).toBeUndefined();
    expect(next.sleeps.reduce((a, b) => a + b, 0)).toBe(2_500);
  });

  it('says a spell of 429s again once the rate had come all the way back, and only once a spell', async () => {
    const { c, logs } = client({ requestsPerSecond: 8 });
    const said = () =>
      logs.records().filter((l) => l.level === 40 && String(l.msg).startsWith('the service answered 429'));
    const spell = async () => {
      sim.control.setFault('servers.list', { rateLimit: { retryAfter: 'none' }, times: 2 });
      await observed(() => c.servers.list({ limit: 1 }));
    };
    await spell();
    expect(said()).toHaveLength(1);
    // Two quiet minutes: 2/s, then 4/s, then the configured 8/s again.
    for (let step = 0; step < 2; step++) {
      await clock.sleep(61_000);
      await observed(() => c.servers.list({ limit: 1 }));
    }
    await clock.sleep(61_000);
    await observed(() => c.servers.list({ limit: 1 }));
    // A week later the service throttles again: the on-call engineer hears of it again.
    await spell();
    expect(said()).toHaveLength(2);
  });

  it('gives up after maxRetries with an ApiError that carries the asked wait', async () => {
    const { c } = client({ maxRetries: 2 });
    sim.control.setFault('servers.list', { rateLimit: { retryAfter: 'seconds', seconds: 1 } });
    const o = await observed(() => c.servers.list());
    expect(o.error).toBeInstanceOf(ApiError);
    expect(o.error).toMatchObject({
      fn: 'servers.list',
      code: 'rate_limited',
      status: 429,
      retryAfterMs: 1_000,
      attempts: 3,
    });
    expect(o.requests).toHaveLength(3);
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs', async () => {
    const { c } = client({ retry: { maxRetryAfterMs: 60_000 } });
    sim.control.setFault('projects.list', { rateLimit: { retryAfter: 'seconds', seconds: 600 }, times: 1 });
    const o = await observed(() => c.projects.list());
    expect(o.error).toMatchObject({ code: 'rate_limited', retryAfterMs: 600_000, attempts: 1 });
    expect(o.sleeps).toEqual([]);
  });

  it('holds the next requests of the same client back until the Retry-After has passed, even when the 429 was final', async () => {
    const { c } = client({ maxRetries: 0 });
    sim.control.setFault('apps.list', { rateLimit: { retryAfter: 'seconds', seconds: 2 }, times: 1 });
    const refused = await observed(() => c.apps.list());
    expect(refused.error).toMatchObject({ code: 'rate_limited', attempts: 1 });
    expect(refused.sleeps).toEqual([]);
    const next = await observed(() => c.whoami());
    expect(next.error).toBeUndefined();
    expect(next.sleeps).toEqual([2_000]);
  });
});

describe('answers that are not what the function promises', () => {
  it('retries an HTML 502 from a proxy and succeeds', async () => {
    const { c, attempts } = client();
    sim.control.setFault('apps.get', { html502: true, times: 2 });
    const o = await observed(() => c.apps.get(appId));
    expect(o.result).toMatchObject({ id: appId });
    expect(o.requests).toEqual([
      ['apps.get', 502],
      ['apps.get', 502],
      ['apps.get', 200],
    ]);
    expect(attempts.map((a) => [a.attempt, a.status, a.errorCode])).toEqual([
      [1, 502, 'not_json'],
      [2, 502, 'not_json'],
      [3, 200, undefined],
    ]);
  });

  it('throws ApiResponseError naming the function when the 502s do not stop', async () => {
    const { c } = client({ maxRetries: 2 });
    sim.control.setFault('urls.list', { html502: true });
    const o = await observed(() => c.urls.list());
    expect(o.error).toBeInstanceOf(ApiResponseError);
    expect(o.error).toMatchObject({ fn: 'urls.list', status: 502, problem: 'not_json', attempts: 3 });
    const e = o.error as ApiResponseError;
    expect(e.message).toMatch(/^urls\.list: answer is not JSON \(HTTP 502\): </);
    expect(e.detail.length).toBeLessThanOrEqual(201);
  });

  it.each([
    ['apps.list', () => client().c.apps.list({ limit: 3 })],
    ['runs.get', () => client().c.runs.get([...state.runs.keys()][0]!)],
  ] as const)('throws ApiResponseError not_json for truncated JSON (%s), without retrying', async (fn, act) => {
    sim.control.setFault(fn, { malformedJson: true, times: 1 });
    const o = await observed<unknown>(act);
    expect(o.error).toBeInstanceOf(ApiResponseError);
    expect(o.error).toMatchObject({ fn, status: 200, problem: 'not_json', attempts: 1 });
    expect(o.requests).toEqual([[fn, 200]]);
  });

  it.each([
    ['runs.list', () => client().c.runs.list({ limit: 5 })],
    ['backups.list', () => client().c.backups.list({ limit: 5 })],
    ['apps.get', () => client().c.apps.get(appId)],
    ['whoami', () => client().c.whoami()],
  ] as const)('throws ApiResponseError schema naming the field of the wrong type (%s)', async (fn, act) => {
    sim.control.setFault(fn, { wrongType: true, times: 1 });
    const o = await observed<unknown>(act);
    expect(o.error).toBeInstanceOf(ApiResponseError);
    const e = o.error as ApiResponseError;
    expect(e).toMatchObject({ fn, status: 200, problem: 'schema', attempts: 1 });
    expect(e.issuePaths.length).toBeGreaterThan(0);
    for (const p of e.issuePaths) expect(e.message).toContain(p);
  });

  it('fails a whole list answer when one item does not fit, and names the item by index and id', async () => {
    const { c } = client();
    sim.control.setFault('runs.list', { wrongType: true, times: 1 });
    const err = (await observed(() => c.runs.list({ limit: 5 }))).error as ApiResponseError;
    // The simulator mistypes either `total` or an item's id; either way the path says where.
    expect(err.issuePaths[0]).toMatch(/^(total|items\[\d+\](\(id [^)]+\))?\.id)$/);
  });
});

describe('no answer in time', () => {
  it('times a hanging request out, retries it, and succeeds when the next one answers', async () => {
    // The hanging first attempt times out; the second, answered at once, has ample time even on a
    // loaded machine (300 ms did not: the retry's answer came late once under CI's load).
    const { c } = client({ timeoutMs: 2_000 });
    sim.control.setFault('servers.list', { hang: true, times: 1 });
    const o = await observed(() => c.servers.list());
    expect(o.error).toBeUndefined();
    expect(o.requests).toEqual([
      ['servers.list', 0],
      ['servers.list', 200],
    ]);
  });

  it('throws ApiTransportError timeout after the retries', async () => {
    const { c, attempts } = client({ timeoutMs: 1_000, maxRetries: 1 });
    sim.control.setFault('installers.list', { hang: true });
    const o = await observed(() => c.installers.list());
    expect(o.error).toBeInstanceOf(ApiTransportError);
    expect(o.error).toMatchObject({ fn: 'installers.list', reason: 'timeout', attempts: 2 });
    expect(attempts.map((a) => a.errorCode)).toEqual(['timeout', 'timeout']);
  });

  it('uses the per-call timeoutMs over the client default', async () => {
    const { c } = client({ timeoutMs: 30_000, maxRetries: 0 });
    sim.control.setFault('whoami', { hang: true });
    const o = await observed(() => c.whoami(undefined, { timeoutMs: 1_000 }));
    expect(o.error).toMatchObject({ reason: 'timeout', message: 'whoami: timeout: no complete answer within 1000 ms' });
  });

  it('ends the call at the deadline, inside a request', async () => {
    const { c } = client({ timeoutMs: 30_000 });
    sim.control.setFault('attention.list', { hang: true });
    const o = await observed(() => c.attention.list(undefined, { deadline: clock.now() + 1_000 }));
    expect(o.error).toBeInstanceOf(ApiTransportError);
    expect(o.error).toMatchObject({ fn: 'attention.list', reason: 'deadline', attempts: 1 });
  });

  it('does not start a retry whose wait would pass the deadline, and throws the last refusal', async () => {
    // The refusal comes well inside the deadline even on a loaded machine; the retry's wait would not.
    const { c } = client({ retry: { baseDelayMs: 5_000, random: () => 0.9 } });
    sim.control.setFault('projects.list', { errorCode: 'internal_error' });
    const o = await observed(() => c.projects.list(undefined, { deadline: clock.now() + 2_000 }));
    expect(o.error).toMatchObject({ fn: 'projects.list', code: 'internal_error', status: 500, attempts: 1 });
    expect(o.sleeps).toEqual([]);
  });

  it('sends nothing when the deadline has already passed', async () => {
    const { c } = client();
    const o = await observed(() => c.whoami(undefined, { deadline: clock.now() - 1 }));
    expect(o.error).toMatchObject({ fn: 'whoami', reason: 'deadline', attempts: 1 });
    expect(o.requests).toEqual([]);
  });

  it('stops a request the caller aborts, without retrying', async () => {
    const { c } = client();
    sim.control.setFault('backups.list', { hang: true });
    const ac = new AbortController();
    const o = await observed(async () => {
      const pending = c.backups.list(undefined, { signal: ac.signal });
      // Abort once the simulator holds the request (it logs a hanging request with status 0).
      while (sim.control.requests().length === 0) await new Promise((r) => setTimeout(r, 5));
      ac.abort();
      return pending;
    });
    expect(o.error).toMatchObject({ fn: 'backups.list', reason: 'aborted', attempts: 1 });
    expect(o.requests).toEqual([['backups.list', 0]]);
  });

  it('retries a refused connection and then throws ApiTransportError connection', async () => {
    const closed = await (await import('../../packages/simulator/src/index.js')).startSimulator({ apps: 1 });
    const url = closed.baseUrl;
    await closed.close();
    const { c } = client({ baseUrl: url, maxRetries: 2 });
    const o = await observed(() => c.whoami());
    expect(o.error).toBeInstanceOf(ApiTransportError);
    expect(o.error).toMatchObject({ fn: 'whoami', reason: 'connection', attempts: 3 });
    expect(o.sleeps).toEqual([50, 100]);
  });
});

describe('a service that stays down', () => {
  it('says its retries once per log.repeat_every and function, then with the count of the rest', async () => {
    const { c, logs } = client();
    sim.control.setFault('apps.list', { errorCode: 'unavailable' });
    for (let i = 0; i < 5; i++) await observed(() => c.apps.list({ limit: 1 }));
    await clock.sleep(60_000);
    await observed(() => c.apps.list({ limit: 1 }));
    expect(logs.records().filter((r) => String(r.msg).startsWith('api read failed; retrying'))).toMatchObject([
      { level: 40, fn: 'apps.list', attempt: 1, reason: 'server_error' },
      { level: 40, fn: 'apps.list', attempt: 1, repeated: 15 },
    ]);
  });
});

describe('changes are never retried by the client', () => {
  const key = () => ({ idempotencyKey: randomUUID() });
  it.each([
    ['a 500', { errorCode: 'internal_error' as const }, { code: 'internal_error', status: 500 }],
    ['a 503', { errorCode: 'unavailable' as const }, { code: 'unavailable', status: 503 }],
    [
      'a 429 with Retry-After',
      { rateLimit: { retryAfter: 'seconds' as const, seconds: 1 } },
      { code: 'rate_limited', status: 429 },
    ],
    ['an HTML 502', { html502: true }, { problem: 'not_json', status: 502 }],
  ])('%s on apps.restart throws at once; the simulator saw one request', async (_name, fault, expected) => {
    const { c } = client();
    sim.control.setFault('apps.restart', { ...fault, times: 1 });
    const o = await observed(() => c.apps.restart(appId, key()));
    expect(o.error).toMatchObject({ fn: 'apps.restart', attempts: 1, ...expected });
    expect(o.requests).toEqual([['apps.restart', expected.status]]);
    expect(o.sleeps).toEqual([]);
  });

  it('a timeout on runs.retry throws at once; the simulator saw one request', async () => {
    // Long enough for the request to reach the simulator on a loaded machine (60 ms failed once).
    const { c } = client({ timeoutMs: 1_000 });
    sim.control.setFault('runs.retry', { hang: true, times: 1 });
    const o = await observed(() => c.runs.retry(1, { now: true }, key()));
    expect(o.error).toMatchObject({ fn: 'runs.retry', reason: 'timeout', attempts: 1 });
    expect(o.requests).toEqual([['runs.retry', 0]]);
  });

  it('the caller may re-send with the same key after a failure, and the service acts once', async () => {
    const { c } = client();
    const k = { idempotencyKey: `resend-${randomUUID()}` };
    sim.control.setFault('apps.backup', { errorCode: 'internal_error', times: 1 });
    const first = await observed(() => c.apps.backup(appId, { format: 'zip' }, k));
    expect(first.error).toMatchObject({ code: 'internal_error' });
    const second = await observed(() => c.apps.backup(appId, { format: 'zip' }, k));
    const third = await observed(() => c.apps.backup(appId, { format: 'zip' }, k));
    expect(second.result).toMatchObject({ state: 'started' });
    expect(third.result).toEqual(second.result);
    expect(sim.control.requests().map((r) => r.idempotencyKey)).toEqual([k.idempotencyKey]);
  });
});

describe('client-side rate limit', () => {
  it('spaces requests by 1/requestsPerSecond once the burst is spent', async () => {
    // The burst is the rate's own: two requests at once, then one every half second.
    const { c } = client({ requestsPerSecond: 2 });
    const o = await observed(async () => {
      for (let i = 0; i < 4; i++) await c.whoami();
    });
    expect(o.requests).toHaveLength(4);
    expect(o.sleeps).toEqual([500, 500]);
  });

  it('refuses to wait for a token past the deadline', async () => {
    const { c } = client({ requestsPerSecond: 1 });
    await c.whoami();
    const o = await observed(() => c.whoami(undefined, { deadline: clock.now() + 100 }));
    expect(o.error).toMatchObject({
      reason: 'deadline',
      message: 'whoami: deadline: the rate limit would hold the request past the deadline',
    });
    expect(o.requests).toEqual([]);
  });
});
