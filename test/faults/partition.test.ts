/**
 * A partition: two replicas of `run` on one PostgreSQL state (an 8s lease); the leader reaches the
 * server through a TCP proxy on loopback, which the test closes, while the follower still reaches
 * it directly. The leader stops acting before the follower takes over:
 * - it says "stepped down" before the other says "became leader", and its lease was still its own
 *   in the database when it did;
 * - from then on it sends nothing: its Slack stand-in receives no more messages and its API proxy
 *   no more requests (each replica has its own, so what arrives says who sent it);
 * - it writes nothing: every write of the leader's tables is fenced under the epoch the lease held
 *   as it was made (the test's own trigger, `fence_audit`);
 * - the follower takes over, tells the problems found during the partition and retries the failed
 *   run once; healed, the old leader follows the new one and never leads again by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { spawnDaemon, until, type Daemon } from '../cli/daemon-fixture.js';
import { freePort } from '../helpers/free-port.js';
import { sharedPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectOneKeyPerRetriedRun, installFenceAudit, tempDir } from './fault-fixture.js';

/** The replicas' lease (s): renewed every quarter; the leader stops acting after three quarters unrenewed. */
const LEASE_S = 8;
/** Room for each wait: replicas start, and a takeover waits out a lease, on a loaded machine. */
const WAIT_MS = 90_000;

let sim: RunningSimulator;
let cluster: PostgresCluster;
let databaseUrl: string;
let tmp: ReturnType<typeof tempDir>;
const peers: { slack: WebhookReceiver; api: TcpProxy; db: TcpProxy | undefined }[] = [];
const replicas: Daemon[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apps: 12, seed: 5 });
  cluster = sharedPostgres();
  databaseUrl = cluster.url(cluster.createDatabase());
  tmp = tempDir('dw-partition-');
});
afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  for (const p of peers) {
    await p.slack.close();
    await p.api.close();
    await p.db?.close();
  }
  await sim.close();
  cluster.close();
  tmp.cleanup();
});

/** A replica with its own Slack stand-in and API proxy; `cuttable`: its PostgreSQL through a proxy too. */
async function replica(name: string, cuttable: boolean) {
  const slack = await startWebhookReceiver();
  const api = await startTcpProxy(Number(new URL(sim.baseUrl).port));
  const db = cuttable ? await startTcpProxy(cluster.port) : undefined;
  peers.push({ slack, api, db });
  const port = await freePort();
  const file = path.join(tmp.dir, `${name}.yaml`);
  fs.writeFileSync(
    file,
    [
      `api: { base_url: "${api.via(sim.baseUrl).replace(/\/$/, '')}", token: "\${DMS_API_TOKEN}", requests_per_second: 500, page_size: 50 }`,
      // 8 s, not 2: the lease runs on the wall clock of real processes, and at a load of 10 a 2 s
      // lease's renewal missed its 1.5 s before the cut (a stepped down and led again as epoch 2).
      `state: { url: "${db ? db.via(databaseUrl) : databaseUrl}", leader: { lease: ${LEASE_S}s } }`,
      'jobs: { runs: "* * * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
      `notify: { channels: [{ name: slack, type: slack, webhook_url: "${slack.url}" }], routes: [{ channels: [slack] }], delivery: { interval: 200ms, timeout: 2s } }`,
      'remediation: { enabled: true, dry_run: false, policies: [{ name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] }, max_attempts: 1, now: true }] }',
      `server: { listen: "127.0.0.1:${port}" }`,
      'log: { level: info, format: json }',
      '',
    ].join('\n'),
  );
  const daemon = spawnDaemon(sim, file, '5s');
  replicas.push(daemon);
  return { daemon, slack, api, db: db!, port };
}

/** The log line of a replica whose message starts with `msg`, parsed; undefined while there is none. */
function line(r: Daemon, msg: string): Record<string, unknown> | undefined {
  const found = r
    .output()
    .split('\n')
    .find((l) => l.includes(`"msg":"${msg}`));
  return found === undefined ? undefined : (JSON.parse(found) as Record<string, unknown>);
}

/** A failed run of an app of `kind` that no message has named yet; its app's name. */
function failRun(kind: 'production' | 'nonproduction', told: string): { runId: number; app: string } {
  const app = [...sim.control.state.apps.values()].find(
    (a) =>
      a.deployedAt !== null &&
      a.state === 'running' &&
      (kind === 'production') === (a.envType === 'production') &&
      !told.includes(a.name),
  )!;
  const run = sim.control.addRun({ appId: app.id, action: 'update', state: 'error' });
  return { runId: run.id, app: app.name };
}

const texts = (r: WebhookReceiver) => r.received.map((p) => JSON.stringify(p)).join('\n');
const retriesOf = (runId: number) =>
  sim.control.requests().filter((r) => r.fn === 'runs.retry' && r.path.includes(`/runs/${runId}/`));

describe("the leader's connection to PostgreSQL cut", () => {
  it('stops it acting before the follower takes over: no send, no write, no change after it steps down', async () => {
    await installFenceAudit(databaseUrl);
    const before = failRun('nonproduction', '');
    const a = await replica('a', true);
    const output = () => replicas.map((r) => r.output()).join('\n');
    await until('a to lead', () => line(a.daemon, 'became leader (epoch 1)') !== undefined, output, WAIT_MS);
    await until(
      'a to tell and retry',
      () => a.slack.received.length > 0 && retriesOf(before.runId).length > 0,
      output,
      WAIT_MS,
    );
    const b = await replica('b', false);
    await until('b to follow a', () => line(b.daemon, 'following') !== undefined, output, WAIT_MS);

    await a.db.cut();
    const told = texts(a.slack) + texts(b.slack);
    const during = [failRun('nonproduction', told), failRun('production', told)];
    await until('a to step down', () => line(a.daemon, 'stepped down') !== undefined, output, WAIT_MS);
    // What a had sent and asked by the time it said so: nothing more may follow.
    const sentBySlack = a.slack.received.length;
    const askedOfApi = await a.api.sent();
    const down = line(a.daemon, 'stepped down')!;
    expect(down.reason).toBe(`the lease could not be renewed within ${(LEASE_S * 3_000) / 4}ms`);

    await until('b to lead', () => line(b.daemon, 'became leader (epoch 2)') !== undefined, output, WAIT_MS);
    const up = line(b.daemon, 'became leader (epoch 2)')!;
    expect(down.time as number).toBeLessThan(up.time as number);
    await until(
      'b to tell the problems of the partition and retry its failed run',
      () => during.every((p) => texts(b.slack).includes(p.app)) && retriesOf(during[0]!.runId).length > 0,
      output,
      WAIT_MS,
    );
    // A deposed leader cut off from the database answers its probe as a follower that is not ready.
    // (/readyz answers the last judgement, made again each second while it is asked.)
    let probe = { status: 0, body: {} as { role?: string; epoch?: number } };
    await until(
      'a to answer as a follower that is not ready',
      async () => {
        const res = await fetch(`http://127.0.0.1:${a.port}/readyz`);
        probe = { status: res.status, body: (await res.json()) as { role?: string; epoch?: number } };
        return probe.status === 503 && probe.body.role === 'follower';
      },
      output,
      WAIT_MS,
    );
    expect(probe.body).toMatchObject({ role: 'follower', epoch: 1 });

    // Healed: a follows b, and has neither sent, nor asked, nor written anything since it stepped down.
    await a.db.restore();
    await until('a to follow b', () => output().includes('"leader":"' + String(up.holder)), output, WAIT_MS);
    await until(
      'a to be a ready follower',
      async () => {
        const res = await fetch(`http://127.0.0.1:${a.port}/readyz`);
        const body = (await res.json()) as { role?: string; epoch?: number };
        return res.status === 200 && body.role === 'follower' && body.epoch === 2;
      },
      output,
      WAIT_MS,
    );
    expect(a.slack.received.length).toBe(sentBySlack);
    for (const p of during) expect(texts(a.slack)).not.toContain(p.app);
    expect(await a.api.sent()).toBe(askedOfApi);
    expect(a.daemon.output()).not.toContain('became leader (epoch 3)');
    expect(retriesOf(during[0]!.runId)).toHaveLength(1);
    expectOneKeyPerRetriedRun(sim);

    for (const r of replicas) r.child.kill('SIGTERM');
    for (const r of replicas) expect(await r.exited, r.output().slice(-3000)).toBe(0);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ epochs: string[]; bad: string }>(
        `SELECT array_agg(DISTINCT claimed::text ORDER BY claimed::text) AS epochs,
                COUNT(*) FILTER (WHERE claimed IS NULL OR claimed <> held) AS bad FROM fence_audit`,
      );
      expect(rows[0]).toEqual({ epochs: ['1', '2'], bad: '0' });
    } finally {
      await db.end();
    }
    expect(output()).not.toContain(cluster.password);
  }, 300_000);
});
