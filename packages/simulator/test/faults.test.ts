import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { startSimulator, type RunningSimulator } from '../src/index.js';
import { apiGet, apiPost, simControl, useSimulator } from '../../../test/helpers/simulator.js';

const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({ apps: 20, clock });

describe('faults', () => {
  it.each([
    ['internal_error', 500],
    ['unavailable', 503],
    ['api_not_available', 403],
  ] as const)('answers an injected %s with %i', async (errorCode, status) => {
    sim.control.setFault('apps.list', { errorCode, times: 1 });
    const res = await apiGet(sim, '/apps');
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(errorCode);
    expect((await apiGet(sim, '/apps')).status).toBe(200);
  });

  it('serves a proxy HTML page with 502', async () => {
    sim.control.setFault('*', { html502: true, times: 1 });
    const res = await apiGet(sim, '/whoami');
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(res.text).toContain('502 Bad Gateway');
  });

  it('answers 200 with truncated JSON', async () => {
    sim.control.setFault('runs.list', { malformedJson: true, times: 1 });
    const res = await apiGet(sim, '/runs?limit=3');
    expect(res.status).toBe(200);
    expect(() => JSON.parse(res.text)).toThrow();
  });

  it.each([
    ['runs.list', '/runs?limit=3', (d: any) => typeof d.total],
    ['runs.get', '/runs/1', (d: any) => typeof d.id],
    ['whoami', '/whoami', (d: any) => typeof d.login],
  ] as const)('answers %s with a field of the wrong type', async (fn, path, typeOf) => {
    sim.control.setFault(fn, { wrongType: true, times: 1 });
    const wrong = await apiGet(sim, path);
    expect(wrong.status).toBe(200);
    const right = await apiGet(sim, path);
    expect(typeOf(wrong.body.data)).not.toBe(typeOf(right.body.data));
  });

  it.each([
    ['seconds', (h: string | null) => expect(h).toBe('7')],
    ['date', (h: string | null) => expect(Date.parse(h ?? '')).toBe(Math.floor((clock.now() + 7000) / 1000) * 1000)],
    ['none', (h: string | null) => expect(h).toBeNull()],
  ] as const)('rate limits with Retry-After as %s', async (retryAfter, check) => {
    sim.control.setFault('apps.list', { rateLimit: { retryAfter, seconds: 7 }, times: 1 });
    const res = await apiGet(sim, '/apps');
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limited');
    check(res.headers.get('retry-after'));
  });

  it('delays an answer by latencyMs (a client with a shorter timeout gives up)', async () => {
    // The client's timeout a second (not tens of milliseconds a loaded machine may spend before
    // the request is even sent), the answer's delay far beyond it.
    sim.control.setFault('whoami', { latencyMs: 5_000, times: 1 });
    const err = await request(`${sim.baseUrl}/api/v1/whoami`, {
      headers: { authorization: `Bearer ${sim.adminToken}` },
      headersTimeout: 1_000,
    }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('HeadersTimeoutError');
    sim.control.setFault('whoami', { latencyMs: 20, times: 1 });
    expect((await apiGet(sim, '/whoami')).status).toBe(200);
  });

  it('hangs until the client gives up', async () => {
    sim.control.setFault('whoami', { hang: true, times: 1 });
    const err = await request(`${sim.baseUrl}/api/v1/whoami`, {
      headers: { authorization: `Bearer ${sim.adminToken}` },
      headersTimeout: 1_000,
    }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('HeadersTimeoutError');
    expect((await apiGet(sim, '/whoami')).status).toBe(200);
  });

  it('close() ends hanging requests', async () => {
    const own = await startSimulator({ apps: 2, clock });
    own.control.setFault('*', { hang: true });
    const pending = fetch(`${own.baseUrl}/api/v1/whoami`, {
      headers: { authorization: `Bearer ${own.adminToken}` },
    }).catch((e: unknown) => e);
    while (own.control.requests().length === 0) await new Promise((r) => setTimeout(r, 5));
    await own.close();
    expect(await pending).toBeInstanceOf(Error);
  });

  it('hits a seeded share of requests when rate < 1: the same on a twin simulator', async () => {
    const pattern = async (target: RunningSimulator) => {
      const statuses: number[] = [];
      target.control.setFault('servers.list', { errorCode: 'internal_error', rate: 0.5 });
      for (let i = 0; i < 40; i += 1) statuses.push((await apiGet(target, '/servers')).status);
      target.control.clearFaults();
      return statuses;
    };
    const a = await startSimulator({ apps: 5, seed: 11, clock });
    const b = await startSimulator({ apps: 5, seed: 11, clock });
    try {
      const first = await pattern(a);
      expect(first.filter((s) => s === 500).length).toBeGreaterThan(5);
      expect(first.filter((s) => s === 200).length).toBeGreaterThan(5);
      expect(await pattern(b)).toEqual(first);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('does not store a faulted change under its idempotency key', async () => {
    const app = [...sim.control.state.apps.values()].find((a) => a.state === 'running' && a.envType === 'development')!;
    sim.control.setFault('apps.restart', { errorCode: 'internal_error', times: 1 });
    expect((await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-fault' })).status).toBe(500);
    expect((await apiPost(sim, `/apps/${app.id}/restart`, {}, { key: 'k-fault' })).status).toBe(200);
  });
});

describe('request log', () => {
  it('records function, status and idempotency key', async () => {
    sim.control.resetRequests();
    await apiGet(sim, '/apps?limit=1');
    await apiGet(sim, '/nope');
    const logged = sim.control.requests();
    expect(logged.map((r) => [r.fn, r.method, r.path, r.status])).toEqual([
      ['apps.list', 'GET', '/api/v1/apps', 200],
      ['', 'GET', '/api/v1/nope', 404],
    ]);
    expect(logged[0]!.at).toBe(sim.control.now());
  });
});

describe('control over HTTP', () => {
  it('advances time, sets and clears faults, and reads stats', async () => {
    const before = sim.control.now();
    const advanced = await simControl(sim, 'advance', [60_000]);
    expect(advanced.status).toBe(200);
    expect(advanced.body.data).toBe(before + 60_000);
    expect((await simControl(sim, 'setFault', ['whoami', { errorCode: 'unavailable' }])).status).toBe(200);
    expect((await apiGet(sim, '/whoami')).status).toBe(503);
    await simControl(sim, 'clearFaults');
    expect((await apiGet(sim, '/whoami')).status).toBe(200);
    expect((await simControl(sim, 'stats')).body.data.apps).toBe(20);
  });

  it('runs a staging operation of a check as checks.<check>.<operation>, as in-process', async () => {
    const app = [...sim.control.state.apps.values()][0]!;
    const res = await simControl(sim, 'checks.maintenance.set', [app.id, true]);
    expect(res.body.data).toMatchObject({ id: app.id, maintenance: true });
    expect(sim.control.checks.maintenance.set(app.id, false).maintenance).toBe(false);
  });

  it('runs scenario helpers with object arguments', async () => {
    const url = [...sim.control.state.urls.values()][0]!;
    const res = await simControl(sim, 'checks.certificates.expire', [url.id, { inDays: -1 }]);
    expect(res.body.data).toMatchObject({ id: url.id, ssl_status: 'expired' });
  });

  it.each([
    ['an unknown token', 'advance', 'nope', 401, 'invalid_token'],
    ['an unknown method', 'selfDestruct', undefined, 404, 'not_found'],
    ['a check with no staging', 'checks.failed_runs.add', undefined, 404, 'not_found'],
    ['an unknown operation of a check', 'checks.certificates.selfDestruct', undefined, 404, 'not_found'],
    ['a prototype name as a check', 'checks.__proto__.toString', undefined, 404, 'not_found'],
    ['a prototype name as an operation', 'checks.certificates.constructor', undefined, 404, 'not_found'],
    ['a path too deep', 'checks.certificates.expire.call', undefined, 404, 'not_found'],
    ['a check operation by its old method name', 'expireCertificate', undefined, 404, 'not_found'],
    ['a method error', 'checks.backups.age', undefined, 400, 'invalid_request'],
  ])('refuses %s', async (_what, method, token, status, code) => {
    const res = await simControl(sim, method, method === 'checks.backups.age' ? [999_999, { hours: 1 }] : [1], token);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
  });
});
