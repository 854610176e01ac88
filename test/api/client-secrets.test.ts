/**
 * The token never leaves the Authorization header: a run of calls that fail in every way the
 * client knows is made with a debug logger capturing every line, and every error is rendered every
 * way an error gets rendered (message, stack, String, JSON, util.inspect); the token string must
 * appear in none of it.
 */
import { inspect } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { ApiCallError } from '../../src/api/errors.js';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSimulator } from '../../packages/simulator/src/index.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';
import { captureLogs } from './log-capture.js';

const TOKEN = 'tok-7c1e9a5d-SECRET-4b2f';
const UNKNOWN_TOKEN = 'tok-0d3b-UNKNOWN-SECRET-88ae';
const sim = await useSimulator({
  apps: 10,
  seed: 5,
  clock: new ManualClock('2026-11-01T12:00:00Z'),
  tokens: [{ token: TOKEN, namespaces: '*', permissions: '*' }],
});
const deadSim = await startSimulator({ apps: 1 });
const deadUrl = deadSim.baseUrl;
await deadSim.close();

const logs = captureLogs();
const clients: ApiClient[] = [];
afterAll(() => Promise.all(clients.map((c) => c.close())));
const make = (token: string, baseUrl = sim.baseUrl, extra: { pageSize?: number; observer?: () => void } = {}) => {
  const c = createApiClient({
    baseUrl,
    token: new Secret(token),
    clock: new JumpingClock(),
    requestsPerSecond: Infinity,
    maxRetries: 1,
    timeoutMs: 5_000,
    retry: { baseDelayMs: 10 },
    logger: logs.logger,
    ...extra,
  });
  clients.push(c);
  return c;
};

describe('the token in logs and errors', () => {
  it('appears in no log line and no rendering of any error of a run of failing calls', async () => {
    const c = make(TOKEN);
    const appId = [...sim.control.state.apps.keys()][0]!;
    const key = () => ({ idempotencyKey: randomUUID() });
    const failing: [string, () => Promise<unknown>][] = [
      ['invalid token', () => make(UNKNOWN_TOKEN).whoami()],
      ['html 502', () => (sim.control.setFault('apps.list', { html502: true, times: 2 }), c.apps.list())],
      [
        'truncated JSON',
        () => (sim.control.setFault('apps.get', { malformedJson: true, times: 1 }), c.apps.get(appId)),
      ],
      ['wrong type', () => (sim.control.setFault('runs.list', { wrongType: true, times: 1 }), c.runs.list())],
      [
        '429',
        () => (
          sim.control.setFault('backups.list', { rateLimit: { retryAfter: 'date', seconds: 1 }, times: 2 }),
          c.backups.list()
        ),
      ],
      [
        'timeout',
        () => (
          sim.control.setFault('servers.list', { hang: true, times: 2 }),
          // A hang always ends in the timeout, so a generous one costs a second, never a flake.
          c.servers.list(undefined, { timeoutMs: 1_000 })
        ),
      ],
      [
        '500 on a change',
        () => (
          sim.control.setFault('apps.restart', { errorCode: 'internal_error', times: 1 }),
          c.apps.restart(appId, key())
        ),
      ],
      ['not found', () => c.apps.get(9_999_999)],
      ['connection refused', () => make(TOKEN, deadUrl).whoami()],
      ['usage error', () => c.apps.restart(appId, {} as never)],
      ['deadline', () => c.whoami(undefined, { deadline: 0 })],
      [
        'shifting list',
        () =>
          make(TOKEN, sim.baseUrl, {
            pageSize: 10,
            // A run created long ago comes below the part read: the list shifts (one at the head would not).
            observer: () => void sim.control.addRun({ appId, state: 'done', startedAgoMs: 400 * 24 * 3600_000 }),
          }).runs.listAll(),
      ],
    ];
    const errors: unknown[] = [];
    for (const [, act] of failing) {
      try {
        await act();
      } catch (err) {
        errors.push(err);
      }
    }
    // Successful calls log too (debug line per request).
    await c.whoami();
    await c.apps.listAll();

    expect(errors).toHaveLength(failing.length);
    for (const err of errors) expect(err).toBeInstanceOf(ApiCallError);
    const renderings = errors.flatMap((err) => {
      const e = err as ApiCallError;
      return [
        e.message,
        e.stack ?? '',
        String(e),
        JSON.stringify(e),
        inspect(e),
        inspect(e, { showHidden: true, depth: 10 }),
      ];
    });
    const everything = [...logs.lines, ...renderings, inspect(c, { showHidden: true, depth: 10 })].join('\n');

    // The run produced what it should have: debug request lines and warnings with reasons.
    const records = logs.records();
    expect(
      records.some(
        (r) => r.msg === 'api request' && r.fn === 'apps.list' && r.status === 200 && typeof r.ms === 'number',
      ),
    ).toBe(true);
    expect(records.some((r) => r.msg === 'api read failed; retrying' && r.reason === 'rate_limited')).toBe(true);
    expect(records.some((r) => r.msg === 'api request failed' && r.errorCode === 'invalid_token')).toBe(true);
    expect(records.every((r) => typeof r.path !== 'string' || r.path.startsWith('/api/v1/'))).toBe(true);

    // Checked as booleans, so a failure does not print the token into the test output either.
    const leaks = Object.entries({ TOKEN, UNKNOWN_TOKEN, marker: 'SECRET' }).filter(([, secret]) =>
      everything.includes(secret),
    );
    expect(leaks.map(([name]) => name)).toEqual([]);
  });
});
