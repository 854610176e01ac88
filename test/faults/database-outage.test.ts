/**
 * Three replicas of `deploy-watchdog run` (real processes) on one real PostgreSQL with a 4s lease,
 * each reaching it through a TCP proxy of its own, through two outages of 20s one after the
 * other: the server stopped (connections refused), then the server reachable but hanging (every
 * proxy stops forwarding and closes nothing: what a network that drops packets does). Throughout:
 * - every replica answers `/healthz` within 1s (polled every 250ms; the slowest answer is
 *   asserted and printed);
 * - the leader steps down within ¾ of its lease of the outage's start (3s, plus a margin);
 * - nothing is sent during the outage (the Slack stand-in and the SMTP sink receive nothing);
 * - after the return, one leader within 15s, stable (no step-down, no other term, for a while
 *   after it), and the epoch risen by at most 2;
 * - at the end, nothing lost and nothing sent twice: every event reached both channels exactly
 *   as often as recorded, every problem staged during the outages told; one retry per failed run;
 *   and no write under a stale epoch (the test's own fence audit).
 * A two-minute outage is the same with a longer wait; at ~2.5 minutes it is left out of the suite
 * (docs/high-availability.md says what it was measured to do).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { Prng } from '../../packages/simulator/src/prng.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { Store } from '../../src/state/store.js';
import { spawnDaemon, until, type Daemon } from '../cli/daemon-fixture.js';
import { freePort } from '../helpers/free-port.js';
import { startHttpProber } from '../helpers/http-prober.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  churnConfigYaml,
  expectDelivered,
  expectNoStaleWrites,
  expectOneKeyPerRetriedRun,
  installFenceAudit,
  stageProblems,
  tempDir,
} from './fault-fixture.js';

const LEASE_MS = 4_000;
const OUTAGE_MS = 20_000;
/** ¾ of the lease, and a margin for a loaded machine (a timer late, a log line written late). */
const STEP_DOWN_WITHIN_MS = (LEASE_MS * 3) / 4 + 1_500;
/**
 * The slowest `/healthz` answer allowed: the figure. The listener answers from a thread of
 * its own (src/server/front-door-worker.ts), so no statement the main thread waits on delays it;
 * the figures are printed (tens of milliseconds on a loaded machine).
 */
const PROBE_BOUND_MS = 1_000;

let sim: RunningSimulator;
let slack: WebhookReceiver;
let mail: SmtpSink;
let cluster: PostgresCluster;
let databaseUrl: string;
let tmp: ReturnType<typeof tempDir>;
const replicas: { name: string; daemon: Daemon; db: TcpProxy; port: number }[] = [];
const probes = new Map<string, { slowestMs: number; failures: string[] }>();
/** Each replica's prober: stopping one records what it saw in {@link probes}. */
let probeStops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  sim = await startSimulator({ apps: 12, seed: 9 });
  slack = await startWebhookReceiver();
  mail = await startSmtpSink();
  cluster = startPostgres();
  databaseUrl = cluster.url(cluster.createDatabase());
  tmp = tempDir('dw-outage-');
}, 120_000);
afterAll(async () => {
  await Promise.all(probeStops.splice(0).map((stop) => stop()));
  for (const r of replicas) {
    if (r.daemon.child.exitCode === null && r.daemon.child.signalCode === null) r.daemon.child.kill('SIGKILL');
    await r.db.close();
  }
  await slack.close();
  await mail.close();
  await sim.close();
  cluster.close();
  tmp.cleanup();
});

async function startReplica(name: string): Promise<void> {
  const db = await startTcpProxy(cluster.port);
  const port = await freePort();
  const file = path.join(tmp.dir, `${name}.yaml`);
  const yaml = churnConfigYaml(sim, { slack, mail }, `{ url: "${db.via(databaseUrl)}", leader: { lease: 4s } }`);
  fs.writeFileSync(file, yaml.replace('server: { listen: "off" }', `server: { listen: "127.0.0.1:${port}" }`));
  replicas.push({ name, daemon: spawnDaemon(sim, file, '5s'), db, port });
  probes.set(name, { slowestMs: 0, failures: [] });
}

/**
 * Asks a replica's `/healthz` every 250ms until the test ends (see `startHttpProber`: each probe on
 * a connection of its own, as the kubelet's, and from a thread of its own: this one blocks while
 * `pg_ctl` stops and starts the server), and keeps its slowest answer and any failure.
 */
async function probe(r: (typeof replicas)[number]): Promise<() => Promise<void>> {
  const prober = await startHttpProber(r.port, ['/healthz'], { everyMs: 250 });
  return async () => {
    const got = await prober.done();
    probes.set(r.name, {
      slowestMs: Math.max(0, ...got.map((p) => p.ms)),
      failures: got
        .filter((p) => p.status !== 200)
        .map((p) => `${new Date(p.at).toISOString()}: ${p.status || ''} ${p.body}`.trim()),
    });
  };
}

interface LogLine {
  msg: string;
  time: number;
  epoch?: number;
}

function lines(r: (typeof replicas)[number]): LogLine[] {
  return r.daemon
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** Every term begun and every step-down, of every replica, in time order. */
function roleChanges(): { replica: string; msg: string; time: number; epoch: number }[] {
  return replicas
    .flatMap((r) =>
      lines(r)
        .filter((l) => l.msg.startsWith('became leader') || l.msg.startsWith('stepped down'))
        .map((l) => ({ replica: r.name, msg: l.msg, time: l.time, epoch: l.epoch ?? 0 })),
    )
    .sort((a, b) => a.time - b.time);
}

/** The replica leading now by its log (its last role change is a term), and its epoch. */
function leader(): { replica: (typeof replicas)[number]; epoch: number } | undefined {
  for (const r of replicas) {
    const last = roleChanges()
      .filter((c) => c.replica === r.name)
      .at(-1);
    if (last?.msg.startsWith('became leader')) return { replica: r, epoch: last.epoch };
  }
  return undefined;
}

const outputs = () => replicas.map((r) => `--- ${r.name}\n${r.daemon.output().slice(-3000)}`).join('\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sent = () => slack.received.length + mail.messages.length;

/** Waits until the outbox holds nothing due and the runs job has completed a cycle since `after`. */
async function settled(after: number): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    let quiet = 0;
    const deadline = Date.now() + 30_000;
    while (quiet < 3) {
      if (Date.now() > deadline) throw new Error(`the replicas did not settle:\n${outputs()}`);
      await sleep(300);
      const { rows } = await db.query<{ pending: string; runs: string | null }>(
        `SELECT (SELECT COUNT(*) FROM outbox WHERE status IN ('pending', 'held')) AS pending,
                (SELECT last_success_at FROM source_health WHERE job = 'runs') AS runs`,
      );
      quiet = Number(rows[0]!.runs ?? 0) > after && Number(rows[0]!.pending) === 0 ? quiet + 1 : 0;
    }
  } finally {
    await db.end();
  }
}

/**
 * One outage: `begin` takes the database away, `end` brings it back. Asserts the step-down, the
 * silence, one stable leader after, and the epoch; stages problems before and during it.
 */
async function outage(
  round: number,
  rng: Prng,
  begin: () => Promise<unknown> | void,
  end: () => Promise<unknown> | void,
) {
  stageProblems(sim, round, rng);
  await settled(Date.now());
  const before = leader();
  expect(before, outputs()).toBeDefined();
  const sentBefore = sent();

  const stoppedAt = Date.now();
  await begin();
  stageProblems(sim, round + 1, rng);
  await until(
    'the leader to step down',
    () => lines(before!.replica).some((l) => l.msg.startsWith('stepped down') && l.time >= stoppedAt),
    outputs,
  );
  const down = lines(before!.replica).find((l) => l.msg.startsWith('stepped down') && l.time >= stoppedAt)!;
  const stepDownMs = down.time - stoppedAt;
  await sleep(Math.max(0, stoppedAt + OUTAGE_MS - Date.now()));
  // Nothing sent while the database was away, and nobody led.
  expect(sent()).toBe(sentBefore);
  expect(roleChanges().filter((c) => c.time > down.time && c.msg.startsWith('became leader'))).toEqual([]);

  const backAt = Date.now();
  await end();
  await until('a replica to lead again', () => leader() !== undefined, outputs, 20_000);
  const after = leader()!;
  const term = roleChanges().find((c) => c.replica === after.replica.name && c.epoch === after.epoch)!;
  // Stable: no other role change for a while after the term began.
  await sleep(5_000);
  const since = roleChanges().filter((c) => c.time >= backAt);
  expect(since, outputs()).toEqual([term]);
  console.log(
    `outage ${round}: stepped down ${stepDownMs}ms after the database went; a leader ${term.time - backAt}ms after it came back; epoch ${before!.epoch} -> ${after.epoch}`,
  );
  expect(stepDownMs).toBeLessThanOrEqual(STEP_DOWN_WITHIN_MS);
  expect(term.time - backAt).toBeLessThanOrEqual(15_000);
  expect(after.epoch - before!.epoch).toBeLessThanOrEqual(2);
}

describe('replicas of `run` through a PostgreSQL outage', () => {
  it('answer their probes, step down on time, send nothing, and lead again once, losing and repeating nothing', async () => {
    await installFenceAudit(databaseUrl);
    for (const name of ['a', 'b', 'c']) await startReplica(name);
    // Started from the sources on a loaded machine, a replica may take a while to listen: probed from then on.
    await until(
      'every replica to listen',
      () => replicas.every((r) => lines(r).some((l) => l.msg === 'health and metrics listener started')),
      outputs,
      180_000,
    );
    probeStops = await Promise.all(replicas.map((r) => probe(r)));
    await until('a replica to lead', () => leader() !== undefined, outputs, 60_000);
    const rng = new Prng(20261127);

    // The server stopped: every connection refused.
    await outage(
      0,
      rng,
      () => cluster.stop('fast'),
      () => cluster.start(),
    );
    // The server reachable but hanging: every proxy forwards nothing, and closes nothing.
    await outage(
      2,
      rng,
      () => Promise.all(replicas.map((r) => r.db.hang())),
      () => Promise.all(replicas.map((r) => r.db.restore())),
    );

    stageProblems(sim, 4, rng);
    await settled(Date.now());
    await Promise.all(probeStops.splice(0).map((stop) => stop()));
    for (const r of replicas) r.daemon.child.kill('SIGTERM');
    for (const r of replicas) expect(await r.daemon.exited, r.daemon.output().slice(-3000)).toBe(0);

    for (const [name, p] of probes) {
      console.log(
        `replica ${name}: slowest /healthz ${p.slowestMs}ms; ${lines(replicas.find((r) => r.name === name)!).length} log lines`,
      );
      expect(p.failures.slice(0, 5), name).toEqual([]);
      expect(p.slowestMs, name).toBeLessThan(PROBE_BOUND_MS);
    }
    const store = Store.openPostgres({
      url: new Secret(databaseUrl),
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 30_000,
    });
    try {
      expectDelivered(store.db, { slack, mail }, { repeats: 0, atLeast: 6 });
      expectNoStaleWrites(store.db);
    } finally {
      store.close();
    }
    expectOneKeyPerRetriedRun(sim);
    const all = replicas.map((r) => r.daemon.output()).join('\n');
    expect(all).not.toContain(cluster.password);
    expect(all).not.toContain(sim.adminToken);
  }, 420_000);
});
