/**
 * A follower whose lease cannot be reached backs off (the shared `lib/backoff.ts`: from a quarter
 * of the lease, doubling to the whole lease) instead of asking every quarter of a lease through a
 * whole outage; it says so once. The "database" is a TCP listener on loopback that takes each
 * connection and drops it at once, so every attempt fails as a server going down makes it fail,
 * and the listener counts the attempts.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { LeaderElection } from '../../src/state/leader-election.js';
import { LeaderLease } from '../../src/state/leader-lease.js';
import { captureLogs } from '../api/log-capture.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A listener that drops every connection at once; `connections()` counts them. */
async function droppingServer(): Promise<{ url: string; connections: () => number }> {
  let n = 0;
  const server = net.createServer((s) => {
    n += 1;
    s.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as net.AddressInfo;
  return { url: `postgres://u:p@127.0.0.1:${port}/db`, connections: () => n };
}

describe('LeaderElection, the lease unreachable', () => {
  it('a follower backs off to one attempt per lease, and says so once', async () => {
    const LEASE_MS = 400;
    const db = await droppingServer();
    const lease = new LeaderLease({
      target: { url: new Secret(db.url), connectTimeoutMs: 1_000, statementTimeoutMs: 1_000 },
      where: 'postgres://test',
      leaseMs: LEASE_MS,
      timeoutMs: 1_000,
      holder: 'a',
    });
    const log = captureLogs();
    const election = new LeaderElection({
      lease,
      leaseMs: LEASE_MS,
      logger: log.logger,
      onElected: () => Promise.resolve(),
      onDeposed: () => Promise.resolve(),
      random: () => 1,
    });
    cleanups.push(() => election.close());
    election.start();
    await new Promise((r) => setTimeout(r, 4_000));
    // Every quarter of the lease would be 40 attempts in 4 s; backing off (100, 200, 400, 400 … ms)
    // about 11, fewer on a slow machine, never more.
    expect(db.connections()).toBeGreaterThanOrEqual(3);
    expect(db.connections()).toBeLessThanOrEqual(14);
    expect(election.status).toMatchObject({ role: 'follower', reached: false });
    expect(log.records().filter((r) => r.msg === 'cannot reach the leader lease')).toHaveLength(1);
  });
});
