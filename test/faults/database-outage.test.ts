/**
 * Replicas of `deploy-watchdog run` (real processes) on a real PostgreSQL with a 6s lease, each
 * reaching it through a TCP proxy of its own, through outages of the database. Two clusters side
 * by side, each with three replicas, a simulator and channel peers of its own, run at once (the
 * long outage is mostly waiting, so it costs CI little beside the short ones):
 * - the short one: the server stopped for 12s (connections refused), then reachable but hanging
 *   for 12s (every proxy stops forwarding and closes nothing: what a network that drops packets
 *   does); each twice the lease, so every replica's renewal and takeover fail in it;
 * - the long one: the server stopped for two minutes of the daemon's log (two of its
 *   `log.repeat_every`), scaled: the two minutes at the default minute, here 20s at 10s.
 * Throughout, on each:
 * - every replica answers `/healthz` within 1s (polled every 250ms; the slowest answer is
 *   asserted and printed);
 * - the leader steps down within ¾ of its lease of the outage's start (4.5s, plus a margin);
 * - nothing is sent during the outage (the Slack stand-in and the SMTP sink receive nothing);
 * - after the return, one leader within 15s, stable (no step-down, no other term, for a while
 *   after it), and the epoch risen by at most 2;
 * - each replica's log during the outage is counted and bounded, in lines and bytes; from the long
 *   outage's, a ten-minute outage is projected (its first log period, then as many of its second
 *   as ten minutes hold) and must stay under 1 MB per replica;
 * - at the end, nothing lost and nothing sent twice: every event reached both channels exactly
 *   as often as recorded (but for a send a leader says it abandoned when it stepped down: its
 *   receiver may have it, and the next leader sends it again), every problem staged during the
 *   outages told; one retry per failed run; and no write under a stale epoch (the test's own
 *   fence audit).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { Prng } from '../../packages/simulator/src/prng.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { SEND_ABANDONED } from '../../src/notify/delivery.js';
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
  MINUTE,
  stageProblems,
  tempDir,
} from './fault-fixture.js';

/**
 * The replicas' lease: 6s rather than the 4s this test had alone, for more slack with six
 * replicas and two servers on two cores: a leader steps down when its main thread waits on its
 * statements past ¾ of it. Not enough on a machine loaded by other work (load 20-40): there every
 * term stepped down at its deadline before any outage, at 4s (20 terms in a row) and at 6s (14),
 * and the three replicas of this test before it failed the same way at 4s.
 */
const LEASE_MS = 6_000;
/** ¾ of the lease, and a margin for a loaded machine (a timer late, a log line written late). */
const STEP_DOWN_WITHIN_MS = (LEASE_MS * 3) / 4 + 1_500;
/**
 * A `/healthz` answer slower than this counts as a failed probe: the figure, and the
 * kubelet's default `timeoutSeconds`. The listener answers from a thread of its own
 * (src/server/front-door-worker.ts), so no statement the main thread waits on delays it; the
 * slowest answer is printed (tens of milliseconds on a loaded machine).
 */
const PROBE_BOUND_MS = 1_000;
/**
 * Slow answers in a row that would take the replica out, as the kubelet's default
 * `failureThreshold` (3) does: the bound on a streak, not on one answer. At load 13-22 one answer
 * of a 170 s run took 1,003 ms, the scheduler's doing, not the daemon's, and no orchestrator acts
 * on one.
 */
const SLOW_PROBES_IN_A_ROW = 3;
/**
 * A replica's log lines during one outage: its step-down and what each loop says of the first
 * failure, then each repeated line once per log period (`log.repeat_every`) with a count
 * (`lib/repeated-log.ts`). Measured (printed): see docs/high-availability.md; the bound leaves room
 * for a loaded machine's extra retries, and is far below the stream the issue saw (15,000 lines a
 * second).
 */
const LOG_LINES_BOUND = (outageMs: number, periodMs: number) => 60 + 30 * Math.ceil(outageMs / periodMs);
/** The figure: a ten-minute outage writes less than this much log per replica. */
const TEN_MINUTES_LOG_BOUND = 1_000_000;
/**
 * The long rig's log period (`log.repeat_every`), a sixth of the default minute, and its outage
 * two such periods: the issue's two-minute outage at a sixth of the wall time. What the long
 * outage proves is the shape of a long outage's log: a first period holding the step-down's
 * one-off lines and the loops' first failures (their backoff's first steps: 1s, 2s, 4s...), then
 * periods of the steady rate, each repeated line said once with a count. The projection from the
 * scaled one can only be higher than the default's: each repeated line is said three times as
 * often, and a retry whose backoff (capped at a minute) has not yet reached its cap comes more
 * often in 10-20s than in a two-minute outage's second minute.
 */
const LONG_LOG_PERIOD_MS = 10_000;
/**
 * The short rig's outages: twice the lease, so each replica's renewal (every quarter of it) and
 * every takeover fail for a whole lease and more, and the step-down (within ¾) is well inside.
 */
const SHORT_OUTAGE_MS = 2 * LEASE_MS;

/** One outage: what takes the database away and brings it back, and for how long. */
interface OutagePlan {
  kind: 'stopped' | 'hanging';
  ms: number;
}

interface LogLine {
  msg: string;
  time: number;
  epoch?: number;
}

interface Replica {
  name: string;
  daemon: Daemon;
  db: TcpProxy;
  port: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One cluster: a simulator, a Slack stand-in, an SMTP sink, a PostgreSQL server and three
 * replicas, each through a TCP proxy of its own; nothing shared with another rig.
 */
class Rig {
  sim!: RunningSimulator;
  slack!: WebhookReceiver;
  mail!: SmtpSink;
  cluster!: PostgresCluster;
  databaseUrl = '';
  tmp = tempDir('dw-outage-');
  readonly replicas: Replica[] = [];
  readonly probes = new Map<string, { slowestMs: number; slowInARow: number; failures: string[] }>();
  /** Each replica's prober: stopping one records what it saw in {@link probes}. */
  probeStops: (() => Promise<void>)[] = [];

  constructor(
    readonly name: string,
    readonly seed: number,
    /** The replicas' `log.repeat_every`. */
    readonly logPeriodMs = MINUTE,
  ) {}

  async open(): Promise<void> {
    this.sim = await startSimulator({ apps: 12, seed: this.seed });
    this.slack = await startWebhookReceiver();
    this.mail = await startSmtpSink();
    this.cluster = startPostgres();
    this.databaseUrl = this.cluster.url(this.cluster.createDatabase());
  }

  async close(): Promise<void> {
    await Promise.all(this.probeStops.splice(0).map((stop) => stop()));
    for (const r of this.replicas) {
      if (r.daemon.child.exitCode === null && r.daemon.child.signalCode === null) r.daemon.child.kill('SIGKILL');
      await r.db.close();
    }
    await this.slack?.close();
    await this.mail?.close();
    await this.sim?.close();
    this.cluster?.close();
    this.tmp.cleanup();
  }

  async startReplica(name: string): Promise<void> {
    const db = await startTcpProxy(this.cluster.port);
    const port = await freePort();
    const file = path.join(this.tmp.dir, `${name}.yaml`);
    const yaml = churnConfigYaml(
      this.sim,
      { slack: this.slack, mail: this.mail },
      `{ url: "${db.via(this.databaseUrl)}", leader: { lease: ${LEASE_MS / 1000}s } }`,
    );
    fs.writeFileSync(
      file,
      yaml
        .replace('server: { listen: "off" }', `server: { listen: "127.0.0.1:${port}" }`)
        .replace('format: json }', `format: json, repeat_every: ${this.logPeriodMs / 1000}s }`),
    );
    this.replicas.push({ name, daemon: spawnDaemon(this.sim, file, '5s'), db, port });
    this.probes.set(name, { slowestMs: 0, slowInARow: 0, failures: [] });
  }

  /**
   * Asks a replica's `/healthz` every 250ms until the test ends (see `startHttpProber`: each probe on
   * a connection of its own, as the kubelet's, and from a thread of its own: this one blocks while
   * `pg_ctl` stops and starts the server), and keeps its slowest answer and any failure.
   */
  async probe(r: Replica): Promise<() => Promise<void>> {
    const prober = await startHttpProber(r.port, ['/healthz'], { everyMs: 250 });
    return async () => {
      const got = await prober.done();
      this.probes.set(r.name, {
        slowestMs: Math.max(0, ...got.map((p) => p.ms)),
        slowInARow: longestRun(got.map((p) => p.ms >= PROBE_BOUND_MS)),
        failures: got
          .filter((p) => p.status !== 200)
          .map((p) => `${new Date(p.at).toISOString()}: ${p.status || ''} ${p.body}`.trim()),
      });
    };
  }

  /** A replica's JSON log lines, each with its length in bytes. */
  lines(r: Replica): (LogLine & { bytes: number })[] {
    return r.daemon
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => ({ ...(JSON.parse(l) as LogLine), bytes: Buffer.byteLength(l) + 1 }));
  }

  /** Every term begun and every step-down, of every replica, in time order. */
  roleChanges(): { replica: string; msg: string; time: number; epoch: number }[] {
    return this.replicas
      .flatMap((r) =>
        this.lines(r)
          .filter((l) => l.msg.startsWith('became leader') || l.msg.startsWith('stepped down'))
          .map((l) => ({ replica: r.name, msg: l.msg, time: l.time, epoch: l.epoch ?? 0 })),
      )
      .sort((a, b) => a.time - b.time);
  }

  /** The replica leading now by its log (its last role change is a term), and its epoch. */
  leader(): { replica: Replica; epoch: number } | undefined {
    const changes = this.roleChanges();
    for (const r of this.replicas) {
      const last = changes.filter((c) => c.replica === r.name).at(-1);
      if (last?.msg.startsWith('became leader')) return { replica: r, epoch: last.epoch };
    }
    return undefined;
  }

  outputs = (): string =>
    `rig ${this.name}\n` + this.replicas.map((r) => `--- ${r.name}\n${r.daemon.output().slice(-3000)}`).join('\n');

  sent = (): number => this.slack.received.length + this.mail.messages.length;

  /**
   * Waits until the outbox holds nothing due and the runs job has completed a cycle since `after`,
   * for up to `ms` (the first time longer: six replicas starting from the sources at once on a
   * loaded machine may pass the lease around a few times before one holds it). A minute after an
   * outage: at load 26 a leader stepped down on its own after the return and the next took 30s.
   */
  async settled(after: number, ms = 60_000): Promise<void> {
    const db = new pg.Client({ connectionString: this.databaseUrl });
    // The other rig's failure closes this one's server under it: said by the query, not as an unhandled error.
    db.on('error', () => undefined);
    await db.connect();
    try {
      let quiet = 0;
      const deadline = Date.now() + ms;
      while (quiet < 3) {
        if (Date.now() > deadline) throw new Error(`the replicas did not settle:\n${this.outputs()}`);
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
   * One outage: takes the database away as planned and brings it back. Asserts the step-down, the
   * silence, the log, one stable leader after, and the epoch; stages problems before and during it.
   */
  async outage(round: number, rng: Prng, plan: OutagePlan): Promise<void> {
    stageProblems(this.sim, round, rng);
    await this.settled(Date.now(), round === 0 ? 120_000 : 60_000);
    const before = this.leader();
    expect(before, this.outputs()).toBeDefined();
    const sentBefore = this.sent();

    const stoppedAt = Date.now();
    if (plan.kind === 'stopped') this.cluster.stop('fast');
    else await Promise.all(this.replicas.map((r) => r.db.hang()));
    stageProblems(this.sim, round + 1, rng);
    const steppedDown = (l: LogLine) => l.msg.startsWith('stepped down') && l.time >= stoppedAt;
    await until('the leader to step down', () => this.lines(before!.replica).some(steppedDown), this.outputs);
    const down = this.lines(before!.replica).find(steppedDown)!;
    const stepDownMs = down.time - stoppedAt;
    await sleep(Math.max(0, stoppedAt + plan.ms - Date.now()));
    // Nothing sent while the database was away, and nobody led.
    expect(this.sent(), this.name).toBe(sentBefore);
    expect(this.roleChanges().filter((c) => c.time > down.time && c.msg.startsWith('became leader'))).toEqual([]);

    const backAt = Date.now();
    this.expectQuietLog(plan, stoppedAt, backAt);
    if (plan.kind === 'stopped') this.cluster.start();
    else await Promise.all(this.replicas.map((r) => r.db.restore()));
    await until('a replica to lead again', () => this.leader() !== undefined, this.outputs, 20_000);
    const after = this.leader()!;
    const term = this.roleChanges().find((c) => c.replica === after.replica.name && c.epoch === after.epoch)!;
    // Stable: no other role change for a while after the term began.
    await sleep(5_000);
    const since = this.roleChanges().filter((c) => c.time >= backAt);
    expect(since, this.outputs()).toEqual([term]);
    console.log(
      `rig ${this.name}, outage ${round} (${plan.kind}, ${plan.ms / 1000}s): stepped down ${stepDownMs}ms after the database went; a leader ${term.time - backAt}ms after it came back; epoch ${before!.epoch} -> ${after.epoch}`,
    );
    expect(stepDownMs, `${this.name}: step-down after the outage began`).toBeLessThanOrEqual(STEP_DOWN_WITHIN_MS);
    expect(term.time - backAt, `${this.name}: a leader after the return`).toBeLessThanOrEqual(15_000);
    expect(after.epoch - before!.epoch, `${this.name}: epochs`).toBeLessThanOrEqual(2);
  }

  /**
   * Each replica's log between `from` and `to`: its lines bounded; for an outage of two log periods
   * or more, a ten-minute one projected from it (its first period, which holds the one-off lines of
   * the step-down, then its second, the steady rate, as often as ten minutes hold the rest) and
   * held under 1 MB.
   */
  expectQuietLog(plan: OutagePlan, from: number, to: number): void {
    for (const r of this.replicas) {
      const during = this.lines(r).filter((l) => l.time >= from && l.time < to);
      const bytes = (a: number, b: number) =>
        during.filter((l) => l.time >= a && l.time < b).reduce((n, l) => n + l.bytes, 0);
      const total = bytes(from, to);
      const period = this.logPeriodMs;
      const projected =
        plan.ms >= 2 * period
          ? bytes(from, from + period) + ((10 * MINUTE) / period - 1) * bytes(from + period, from + 2 * period)
          : undefined;
      console.log(
        `rig ${this.name}, replica ${r.name}, ${plan.kind} ${plan.ms / 1000}s: ${during.length} log lines, ${total} bytes` +
          (projected === undefined ? '' : `; a ten-minute outage projected at ${projected} bytes`),
      );
      const said = [...new Set(during.map((l) => l.msg))].slice(0, 40).join('\n');
      expect(during.length, `${this.name}/${r.name}: log lines during the outage:\n${said}`).toBeLessThanOrEqual(
        LOG_LINES_BOUND(plan.ms, this.logPeriodMs),
      );
      if (projected !== undefined) expect(projected, `${this.name}/${r.name}`).toBeLessThan(TEN_MINUTES_LOG_BOUND);
    }
  }

  /** Three replicas, each listening (probed from then on). */
  async start(): Promise<void> {
    await installFenceAudit(this.databaseUrl);
    for (const name of ['a', 'b', 'c']) await this.startReplica(name);
    // Started from the sources on a loaded machine, a replica may take a while to listen: probed from then on.
    await until(
      'every replica to listen',
      () => this.replicas.every((r) => this.lines(r).some((l) => l.msg === 'health and metrics listener started')),
      this.outputs,
      180_000,
    );
    this.probeStops = await Promise.all(this.replicas.map((r) => this.probe(r)));
  }

  /**
   * The outages one after the other once a replica leads, a last round left to settle, a SIGTERM
   * of every replica, then what the peers and the database hold.
   */
  async run(outages: readonly OutagePlan[]): Promise<void> {
    await until('a replica to lead', () => this.leader() !== undefined, this.outputs, 60_000);
    const rng = new Prng(this.seed * 1_000_003);
    for (const [i, plan] of outages.entries()) await this.outage(2 * i, rng, plan);

    stageProblems(this.sim, 2 * outages.length, rng);
    await this.settled(Date.now());
    await Promise.all(this.probeStops.splice(0).map((stop) => stop()));
    for (const r of this.replicas) r.daemon.child.kill('SIGTERM');
    for (const r of this.replicas) expect(await r.daemon.exited, r.daemon.output().slice(-3000)).toBe(0);

    for (const [name, p] of this.probes) {
      const r = this.replicas.find((x) => x.name === name)!;
      console.log(
        `rig ${this.name}, replica ${name}: slowest /healthz ${p.slowestMs}ms (${p.slowInARow} in a row over ${PROBE_BOUND_MS}ms); ${this.lines(r).length} log lines`,
      );
      expect(p.failures.slice(0, 5), `${this.name}/${name}`).toEqual([]);
      expect(p.slowInARow, `${this.name}/${name}: slowest ${p.slowestMs}ms`).toBeLessThan(SLOW_PROBES_IN_A_ROW);
    }
    const store = Store.openPostgres({
      url: new Secret(this.databaseUrl),
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 30_000,
    });
    // Nothing twice, but for a send a leader abandoned mid-way when it stepped down (the one window
    // left: docs/high-availability.md, "Nothing sent twice across an outage"), which it says.
    const abandoned = this.replicas.flatMap((r) => this.lines(r)).filter((l) => l.msg === SEND_ABANDONED).length;
    console.log(`rig ${this.name}: ${abandoned} sends abandoned at a step-down`);
    try {
      expectDelivered(store.db, { slack: this.slack, mail: this.mail }, { repeats: abandoned, atLeast: 6 });
      expectNoStaleWrites(store.db);
    } finally {
      store.close();
    }
    expectOneKeyPerRetriedRun(this.sim);
    const all = this.replicas.map((r) => r.daemon.output()).join('\n');
    expect(all).not.toContain(this.cluster.password);
    expect(all).not.toContain(this.sim.adminToken);
  }
}

const short = new Rig('short', 9);
const long = new Rig('long', 11, LONG_LOG_PERIOD_MS);

beforeAll(async () => {
  await short.open();
  await long.open();
}, 120_000);
afterAll(async () => {
  await short.close();
  await long.close();
});

describe('replicas of `run` through a PostgreSQL outage', () => {
  it('answer their probes, step down on time, log little, send nothing, and lead again once, losing and repeating nothing', async () => {
    // Side by side: the short outages and their settling happen beside the long one.
    // The long rig first, the short one's replicas started once the long one's listen: six
    // replicas starting from the sources at once would share two cores for their busiest seconds.
    await long.start();
    const longRun = long.run([{ kind: 'stopped', ms: 2 * LONG_LOG_PERIOD_MS }]);
    longRun.catch(() => undefined); // awaited below; not unhandled meanwhile
    await short.start();
    await Promise.all([
      longRun,
      short.run([
        { kind: 'stopped', ms: SHORT_OUTAGE_MS },
        { kind: 'hanging', ms: SHORT_OUTAGE_MS },
      ]),
    ]);
  }, 480_000);
});

/** The longest run of `true` in `flags`. */
function longestRun(flags: readonly boolean[]): number {
  let longest = 0;
  let run = 0;
  for (const flag of flags) {
    run = flag ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}
