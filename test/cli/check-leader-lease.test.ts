/**
 * `check` on a PostgreSQL state, in-process through `main` against the simulator: it takes the
 * leader lease or does nothing. While a replica of `run` leads, it is refused (exit 2) naming that
 * replica, as it is beside a daemon on a SQLite file: both would deliver the same outbox. With the
 * lease free it leads for its one cycle, every write fenced under its epoch, and releases the
 * lease at the end, so a replica takes over at its next try.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { LeaderLease } from '../../src/state/leader-lease.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';
import type { PostgresCluster } from '../helpers/postgres.js';
import { testCluster } from '../helpers/state-backends.js';
import { installFenceAudit } from '../faults/fault-fixture.js';

let sim: RunningSimulator;
let cluster: PostgresCluster;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 6 });
  cluster = testCluster();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-check-lease-'));
});
afterAll(async () => {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Another replica's hold on the lease of `url`, as `run` on host-b would take it. */
function replicaOn(url: string): LeaderLease {
  return new LeaderLease({
    target: { url: new Secret(url), connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 },
    where: 'test',
    leaseMs: 60_000,
    timeoutMs: 5_000,
    holder: '0a1b2c3d4e5f@host-b/4242',
  });
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql)).rows;
  } finally {
    await c.end();
  }
}

async function check(url: string) {
  const file = writeConfig(dir, [
    `api: { base_url: "${sim.baseUrl}", token: "\${DMS_API_TOKEN}", requests_per_second: 1000, max_retries: 0 }`,
    'state: { url: "${DATABASE_URL}" }',
    'jobs: { maintenance: "off" }',
    'notify: { channels: [{ name: console, type: log }], routes: [{ channels: [console] }] }',
    'log: { level: warn }',
  ]);
  const result = await runCli(['check', '--config', file], {
    env: { DMS_API_TOKEN: sim.adminToken, DATABASE_URL: url },
  });
  expect(result.stdout + result.stderr).not.toContain(cluster.password);
  return result;
}

describe('check on a PostgreSQL state', () => {
  it('is refused while a replica leads, naming it, and writes nothing; with the lease free it leads fenced and releases it', async () => {
    const url = cluster.url(cluster.createDatabase());
    await installFenceAudit(url);
    const replica = replicaOn(url);
    expect(await replica.acquire()).toBe(1);

    const refused = await check(url);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /deploy-watchdog run \(pid 4242 on host-b\) is working on this state file; a check now would send what it sends twice/,
    );
    expect(await query(url, 'SELECT holder, epoch FROM leader_lease')).toEqual([
      { holder: '0a1b2c3d4e5f@host-b/4242', epoch: '1' },
    ]);
    expect(await query(url, 'SELECT COUNT(*)::int AS n FROM alerts')).toEqual([{ n: 0 }]);

    // The replica stops and gives the lease back: the check leads, under epoch 2.
    expect(await replica.release(1)).toBe(true);
    await replica.close();
    const done = await check(url);
    expect(done.code, done.stderr).toBe(0);
    const [lease] = await query<{ holder: string; epoch: string; live: boolean }>(
      url,
      'SELECT holder, epoch, expires_at > now() AS live FROM leader_lease',
    );
    expect(lease).toMatchObject({ epoch: '2', live: false });
    expect(lease!.holder).toMatch(new RegExp(`@${os.hostname()}/${process.pid}$`));
    const [written] = await query<{ n: number }>(url, 'SELECT COUNT(*)::int AS n FROM alerts');
    expect(written!.n).toBeGreaterThan(0);
    expect(await query(url, 'SELECT DISTINCT claimed::text AS claimed, held::text AS held FROM fence_audit')).toEqual([
      { claimed: '2', held: '2' },
    ]);
  });
});
