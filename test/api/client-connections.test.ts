/**
 * Connection handling: the client keeps connections alive between calls (bodies are always read to
 * the end, failures included, so a socket goes back to the pool), and a dispatcher passed in stays
 * the caller's: the client does not close it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Agent, buildConnector } from 'undici';
import { createApiClient } from '../../src/api/client.js';
import { Secret } from '../../src/lib/secret.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { useSimulator } from '../helpers/simulator.js';
import { JumpingClock } from './jumping-clock.js';

const sim = await useSimulator({ apps: 5, seed: 6, clock: new ManualClock('2026-11-01T12:00:00Z') });

/** An Agent that counts the sockets it opens. */
function countingAgent() {
  const connect = buildConnector({});
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connect: (opts, cb) => {
      counter.sockets += 1;
      return connect(opts, cb);
    },
  });
  const counter = { sockets: 0, agent };
  return counter;
}

describe('connections', () => {
  const counted = countingAgent();
  afterAll(() => counted.agent.close());

  it('reuses one keep-alive connection for calls in a row, refusals and broken answers included', async () => {
    const c = createApiClient({
      baseUrl: sim.baseUrl,
      token: new Secret(sim.adminToken),
      clock: new JumpingClock(),
      requestsPerSecond: Infinity,
      maxRetries: 0,
      dispatcher: counted.agent,
    });
    sim.control.setFault('apps.list', { html502: true, times: 1 });
    const outcomes: string[] = [];
    for (const act of [
      () => c.whoami(),
      () => c.apps.get(9_999_999),
      () => c.apps.list(),
      () => c.backups.listAll(),
      () => c.runs.list({ limit: 3 }),
    ]) {
      outcomes.push(
        await act().then(
          () => 'ok',
          (e: Error) => e.name,
        ),
      );
    }
    for (let i = 0; i < 10; i++) await c.whoami();
    expect(outcomes).toEqual(['ok', 'ApiError', 'ApiResponseError', 'ok', 'ok']);
    // 20+ requests over at most 2 sockets: undici frees a socket a tick after the body ends, so a
    // call sent in that same tick may open a second one; after that both are reused.
    expect(counted.sockets).toBeLessThanOrEqual(2);
    await c.close();
  });

  it('leaves a dispatcher it was given open on close()', async () => {
    const c = createApiClient({ baseUrl: sim.baseUrl, token: new Secret(sim.adminToken), dispatcher: counted.agent });
    await c.close();
    expect(counted.agent.closed).toBe(false);
    const again = createApiClient({
      baseUrl: sim.baseUrl,
      token: new Secret(sim.adminToken),
      dispatcher: counted.agent,
    });
    await expect(again.whoami()).resolves.toMatchObject({ login: 'sim-admin' });
  });

  it('closes the dispatcher it made itself, and refuses calls after close()', async () => {
    const c = createApiClient({ baseUrl: sim.baseUrl, token: new Secret(sim.adminToken) });
    await c.whoami();
    await c.close();
    sim.control.resetRequests();
    await expect(c.whoami()).rejects.toMatchObject({ name: 'ApiUsageError', message: 'whoami: the client is closed' });
    expect(sim.control.requests()).toEqual([]);
  });
});
