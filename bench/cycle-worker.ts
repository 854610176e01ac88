/**
 * One benchmark size, in a process of its own so peak RSS and CPU time are the watchdog's alone:
 * a Watchdog built from a config against the simulator child, its state in a SQLite file or in the
 * PostgreSQL database `$BENCH_DATABASE_URL` names (`--state`), then
 *   1. a first cycle of every job (the alert table fills: what a daemon does at its first start),
 *   2. a steady-state cycle (nothing changed), then the bare-fetch bound of the same requests,
 *   3. `churn(0.01)` in the simulator, a churn cycle, and its bare-fetch bound,
 *   4. the diff work measured apart: each job's snapshot read once more and its detectors timed,
 *   5. with `--per-job`, each job's steady cycle alone beside the bound of its own requests.
 * The bare-fetch bounds are fetched by the parent (asked over the IPC channel with the requests the
 * cycle made), so their response buffers never count toward this process's RSS.
 * Prints one JSON line (a {@link WorkerResult}) on stdout. Run by `bench/cycle-bench.ts`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from '../src/lib/undici-core.js';
import { getOrAdd } from '../src/lib/get-or-add.js';
import { createApiClient } from '../src/api/client.js';
import { silentLogger } from '../src/lib/logger.js';
import { detectorOptionsFromConfig } from '../src/detectors/registry.js';
import { applyHeapGrowth } from '../src/cli/memory-settings.js';
import { Watchdog, type CycleReport } from '../src/app/watchdog.js';
import { COLLECTORS, JOB_NAMES } from '../src/collectors/collectors.js';
import { resolveNamespaces } from '../src/collectors/resolve-namespaces.js';
import type { Snapshot } from '../src/collectors/snapshot.js';
import { parseConfig } from '../src/config/load-config.js';
import { runDetectors } from '../src/detectors/registry.js';
import { BENCH_STATES, type BenchState } from './lib/bench-states.js';
import { createCountingDispatcher, type SeenRequest } from './lib/counting-dispatcher.js';
import { cpuMs, peakRssMb, round, timeSyncMethod } from './lib/measure.js';

/** Figures of one measured cycle. */
export interface CycleFigures {
  cycle_ms: number;
  /** Bare undici loop over the same GETs at the cycle's concurrency. */
  bare_fetch_ms: number;
  /** The same, one request at a time (how a list walk pages). */
  bare_fetch_serial_ms: number;
  ratio: number;
  /** Each pair's ratio, in order (paired cycles only). */
  ratios?: number[];
  requests: number;
  bytes: number;
  cpu_ms: number;
  /** Time inside the cycles' state transactions (lifecycle, source health, outbox), on SQLite or PostgreSQL. */
  state_ms: number;
  /** The process's CPU (every thread: PostgreSQL's connection is a worker thread) inside them. */
  state_cpu_ms: number;
  /** Highest RSS sampled during the cycle. */
  rss_mb: number;
  /**
   * The 99th percentile of the event loop's lag during the cycle (ms; `monitorEventLoopDelay` at a
   * 1 ms resolution, less that resolution): how long the probes, the console and Slack's
   * acknowledgements would have waited. The highest of the cycles for paired ones.
   */
  event_loop_lag_p99_ms: number;
  events: number;
  complete: boolean;
}

/** What the worker prints. */
export interface WorkerResult {
  apps: number;
  state: BenchState;
  first: CycleFigures;
  steady: CycleFigures;
  churn: CycleFigures & { changed: Record<string, number> };
  /** Records in the snapshots of one cycle (runs, run details, URLs, apps, backups, attention items). */
  records: number;
  /** CPU of the detectors over one cycle's snapshots (pure; measured apart). */
  detect_cpu_ms: number;
  /** (detectors + steady-state state CPU) per 1,000 records. */
  diff_state_cpu_ms_per_1k: number;
  /** Same with the churn cycle's state CPU. */
  diff_state_cpu_ms_per_1k_churn: number;
  /** RSS after the Watchdog was built, before any cycle. */
  rss_start_mb: number;
  /** The watchdog's peak: kernel maxRSS after the first cycle, or the highest RSS sampled (every 10 ms) in a later measured cycle. */
  peak_rss_mb: number;
  /** Kernel maxRSS right after the first cycle (start and first cycle). */
  peak_rss_first_mb: number;
  heap_used_mb: number;
  /** After the churn cycle, a full GC: the RSS and V8 heap that are live, not garbage not yet collected. */
  rss_after_gc_mb: number;
  heap_live_mb: number;
  /** The state's size at the end: the SQLite file (after a checkpoint), or PostgreSQL's tables with their indexes and TOAST. */
  db_bytes: number;
  /** Rows of the state's largest tables at the end. */
  rows: { alerts: number; events: number; outbox: number; notification_log: number };
  open_alerts: number;
  /** The old-generation growth the worker set as the daemon does; null: V8's own (or the node options'). */
  heap_growing_percent: number | null;
  /** With `--per-job`: each job's steady cycle alone beside the bound of its own requests. */
  jobs?: JobFigures[];
}

/**
 * One job's steady cycle run alone (`runOnce([job])`), {@link JOB_ROUNDS} times after the measured
 * cycles, each beside the bare fetch of its own requests: the medians. Where a cycle's time goes.
 */
export interface JobFigures {
  job: string;
  requests: number;
  wall_ms: number;
  cpu_ms: number;
  bare_fetch_ms: number;
  ratio: number;
}

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    token: { type: 'string' },
    apps: { type: 'string' },
    concurrency: { type: 'string', default: '4' },
    'page-size': { type: 'string', default: '1000' },
    /** `api.requests_per_second`: a number up to 1000, or `off`. */
    rps: { type: 'string', default: 'off' },
    /** V8's own heap sizing: the growth setting of `bin.ts` is not applied. */
    'v8-defaults': { type: 'boolean', default: false },
    /** Where the state is: a SQLite file, or the PostgreSQL database `$BENCH_DATABASE_URL` names. */
    state: { type: 'string', default: 'sqlite' },
    /** Also time each job alone beside its own bound ({@link JobFigures}). */
    'per-job': { type: 'boolean', default: false },
  },
});
const baseUrl = values['base-url'] ?? fail('--base-url is required');
const token = values.token ?? fail('--token is required');
const apps = Number(values.apps ?? fail('--apps is required'));
const concurrency = Number(values.concurrency);
const state = BENCH_STATES.find((s) => s === values.state) ?? fail(`--state must be ${BENCH_STATES.join(' or ')}`);
const pageSize = Number(values['page-size']);

// As `bin.ts` does for the daemon, unless measuring V8's own heap sizing.
const heapGrowingPercent = values['v8-defaults'] ? null : applyHeapGrowth();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-bench-'));
const statePath = path.join(dir, 'state.db');
const config = parseConfig(
  `
api:
  base_url: ${baseUrl}
  token: \${BENCH_TOKEN}
  requests_per_second: ${values.rps}
  page_size: ${pageSize}
  concurrency: ${concurrency}
state:
  ${state === 'sqlite' ? `path: ${statePath}` : 'url: ${BENCH_DATABASE_URL}'}
jobs:
  jitter: 0s
notify:
  channels:
    - { name: ops-slack, type: slack, webhook_url: "http://127.0.0.1:9/hook" }
    - { name: ops-mail, type: email, smtp: { host: 127.0.0.1, port: 9 }, from: watchdog@example.com, to: [ops@example.com] }
  routes:
    - { match: { environment_type: production }, channels: [ops-slack, ops-mail] }
    - { channels: [ops-slack] }
server:
  listen: "off"
`,
  { BENCH_TOKEN: token, BENCH_DATABASE_URL: process.env.BENCH_DATABASE_URL },
  'bench.yaml',
);

const counting = createCountingDispatcher();
const watchdog = Watchdog.open({ config, logger: silentLogger, dispatcher: counting.dispatcher });
const transactions = timeSyncMethod(watchdog.store, 'transaction');
const rssStart = round(process.memoryUsage().rss / 1_048_576);

/** The event-loop monitor's resolution (ms): fine enough to see a statement that blocks for a few. */
const LAG_RESOLUTION_MS = 1;

/** Steady cycles, each paired with its bound. */
const STEADY_PAIRS = 5;
/** Churn cycles (each after its own `churn(0.01)`), each paired with its bound. */
const CHURN_PAIRS = 3;

/** One cycle's figures before its bound, with the requests it made. */
type Measured = Omit<CycleFigures, 'bare_fetch_ms' | 'bare_fetch_serial_ms' | 'ratio'> & {
  report: CycleReport;
  seen: SeenRequest[];
};

async function measureCycle(): Promise<Measured> {
  // An empty request log in the simulator before each measured cycle (see `bound` in cycle-bench.ts).
  await simControl('resetRequests');
  counting.reset();
  transactions.reset();
  const rss = await watchOwnRss();
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  lag.enable();
  const c0 = cpuMs();
  const t0 = performance.now();
  const report = await watchdog.runOnce();
  const wall = performance.now() - t0;
  const cpu = cpuMs() - c0;
  lag.disable();
  const seen = [...counting.seen()];
  const rssMb = await rss.stop();
  return {
    report,
    seen,
    cycle_ms: round(wall),
    requests: seen.length,
    bytes: seen.reduce((s, r) => s + r.bytes, 0),
    cpu_ms: round(cpu),
    state_ms: round(transactions.wallMs),
    state_cpu_ms: round(transactions.cpuMs),
    rss_mb: round(rssMb),
    // Each sample is the time between two ticks of the monitor's timer: its resolution is not lag.
    event_loop_lag_p99_ms: round(Math.max(0, lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS)),
    events: report.events,
    complete: report.complete,
  };
}

/** The parent's answer to a {@link BoundRequest}: the fastest bare loops over those requests. */
export interface BoundAnswer {
  bare_ms: number;
  /** One request at a time; 0 when not asked for. */
  serial_ms: number;
}

/** Asked of the parent over IPC: the bare-fetch bound of these requests at this concurrency. */
export interface BoundRequest {
  type: 'bound';
  requests: SeenRequest[];
  concurrency: number;
  /** Bare loops to run (the fastest counts). */
  runs: number;
  /** Also the one-at-a-time loop (how a walk without read-ahead would page). */
  serial: boolean;
}

/**
 * Asked of the parent over IPC: watch this process's RSS (`start`) or stop and answer the highest
 * seen (`stop`). The parent samples, so no reading of RSS stalls the watchdog's event loop.
 */
export interface RssRequest {
  type: 'rss';
  action: 'start' | 'stop';
  pid: number;
}

/** The parent's answer to an {@link RssRequest}: the highest RSS seen since `start` (0 on `start`). */
export interface RssAnswer {
  rss_mb: number;
}

/** One question to the parent, answered before the next is asked. */
function askParent<A>(question: BoundRequest | RssRequest): Promise<A> {
  if (!process.send)
    fail('run me from bench/cycle-bench.ts (the bound and the RSS are measured by the parent over IPC)');
  return new Promise((resolve) => {
    process.once('message', (answer: A) => resolve(answer));
    process.send!(question);
  });
}

function askBound(requests: SeenRequest[], runs: number, serial: boolean): Promise<BoundAnswer> {
  return askParent({ type: 'bound', requests, concurrency, runs, serial });
}

async function watchOwnRss(): Promise<{ stop(): Promise<number> }> {
  await askParent<RssAnswer>({ type: 'rss', action: 'start', pid: process.pid });
  return {
    stop: async () => (await askParent<RssAnswer>({ type: 'rss', action: 'stop', pid: process.pid })).rss_mb,
  };
}

/**
 * Cycles each followed at once by the bound of its own requests, `pairs` times: the ratio is the
 * median of the pairs' ratios, so a slow stretch of this shared machine (the simulator and the
 * watchdog share two cores with whatever else runs) weighs on a cycle and its bound alike, not on
 * one of them. `prepare` runs before each cycle (e.g. churn). Wall figures are the medians, RSS
 * the highest; the serial bound is fetched once, for the first cycle's requests (the cycles of a
 * kind make the same requests, give or take churn). A cycle's requests are dropped once its bounds
 * are fetched: 10,000 records per cycle kept across the pairs raised the watchdog's live heap, and
 * with it the peak that V8's heap sizing allows, by several MB that were the harness's.
 */
async function pairedCycles(pairs: number, prepare?: () => Promise<void>): Promise<CycleFigures> {
  const samples: { m: Omit<Measured, 'seen' | 'report'>; bare: number }[] = [];
  let serial = 0;
  for (let i = 0; i < pairs; i++) {
    await prepare?.();
    const { seen, report: _report, ...m } = await measureCycle();
    samples.push({ m, bare: (await askBound(seen, 1, false)).bare_ms });
    if (i === 0) serial = (await askBound(seen, 1, true)).serial_ms;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const figures = [...samples].sort((a, b) => a.m.cycle_ms - b.m.cycle_ms)[Math.floor(pairs / 2)]!.m;
  return {
    ...figures,
    cycle_ms: median(samples.map((x) => x.m.cycle_ms)),
    cpu_ms: median(samples.map((x) => x.m.cpu_ms)),
    state_ms: median(samples.map((x) => x.m.state_ms)),
    state_cpu_ms: median(samples.map((x) => x.m.state_cpu_ms)),
    rss_mb: Math.max(...samples.map((x) => x.m.rss_mb)),
    event_loop_lag_p99_ms: Math.max(...samples.map((x) => x.m.event_loop_lag_p99_ms)),
    bare_fetch_ms: round(median(samples.map((x) => x.bare))),
    bare_fetch_serial_ms: round(serial),
    ratio: round(median(samples.map((x) => x.m.cycle_ms / x.bare)), 2),
    ratios: samples.map((x) => round(x.m.cycle_ms / x.bare, 2)),
  };
}

/**
 * The start-up cycle and its bound, and the kernel's high-water mark right after it: that is the
 * watchdog's own (start, first cycle); later cycles are sampled, since the detector timing at the
 * end is the harness's work and must not count. Its requests are not kept past the bound.
 */
async function firstCycle(): Promise<{ first: CycleFigures; peakAfterFirst: number }> {
  const m = await measureCycle();
  const peakAfterFirst = peakRssMb();
  return { first: await withBound(m), peakAfterFirst };
}

async function withBound(m: Measured): Promise<CycleFigures> {
  const bound = await askBound(m.seen, 3, true);
  const { report: _report, seen: _seen, ...figures } = m;
  return {
    ...figures,
    bare_fetch_ms: round(bound.bare_ms),
    bare_fetch_serial_ms: round(bound.serial_ms),
    ratio: round(m.cycle_ms / bound.bare_ms, 2),
  };
}

async function simControl<T>(method: string, ...args: unknown[]): Promise<T> {
  const res = await request(`${baseUrl}/_sim/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`simulator control ${method}: ${res.statusCode} ${text.slice(0, 200)}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** Rounds of {@link perJob}: one job's cycles are short, and this machine's pauses are not. */
const JOB_ROUNDS = 3;

/** Each job's steady cycle alone, paired with the bound of its own requests ({@link JobFigures}). */
async function perJob(): Promise<JobFigures[]> {
  const samples = new Map<string, { requests: number; wall: number; cpu: number; bare: number }[]>();
  for (let round = 0; round < JOB_ROUNDS; round++) {
    for (const job of watchdog.jobs) {
      await simControl('resetRequests');
      counting.reset();
      const c0 = cpuMs();
      const t0 = performance.now();
      await watchdog.runOnce([job]);
      const wall = performance.now() - t0;
      const cpu = cpuMs() - c0;
      const seen = [...counting.seen()];
      const bare = (await askBound(seen, 1, false)).bare_ms;
      getOrAdd(samples, job, () => []).push({ requests: seen.length, wall, cpu, bare });
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return [...samples].map(([job, xs]) => ({
    job,
    requests: median(xs.map((x) => x.requests)),
    wall_ms: round(median(xs.map((x) => x.wall))),
    cpu_ms: round(median(xs.map((x) => x.cpu))),
    bare_fetch_ms: round(median(xs.map((x) => x.bare))),
    ratio: round(median(xs.map((x) => x.wall / x.bare)), 2),
  }));
}

/** Reads every job's snapshot once more (outside any measured cycle) and times the detectors alone. */
async function detectorWork(): Promise<{ records: number; cpuMs: number }> {
  const client = createApiClient({
    baseUrl,
    token: config.api.token,
    requestsPerSecond: config.api.requests_per_second,
    pageSize,
    dispatcher: counting.dispatcher,
  });
  const scope = await resolveNamespaces(client, config.api.namespaces);
  const options = detectorOptionsFromConfig(config.checks);
  let records = 0;
  let cpu = 0;
  for (const job of JOB_NAMES) {
    const now = Date.now();
    const snapshot = await COLLECTORS[job]({
      client,
      namespaces: scope.namespaces,
      reached: scope.reached,
      checks: config.checks,
      now,
      concurrency,
      logger: silentLogger,
    });
    records += recordsOf(snapshot);
    // Several rounds: one run of a small job is below the CPU clock's resolution.
    const rounds = 5;
    const c0 = cpuMs();
    for (let i = 0; i < rounds; i++) runDetectors(snapshot, options, now);
    cpu += (cpuMs() - c0) / rounds;
  }
  return { records, cpuMs: cpu };
}

function recordsOf(s: Snapshot): number {
  switch (s.job) {
    case 'runs':
      return s.runs.length + s.details.size + s.apps.size;
    case 'urls':
      return s.urls.length + s.apps.size;
    case 'backups':
      return s.apps.length + s.backups.size;
    case 'attention':
      return s.summary.sections.reduce((n, sec) => n + sec.items.length, 0);
    case 'maintenance':
      return s.apps.length;
    default:
      // A job added later: counted by its arrays and maps, whatever they hold.
      return Object.values(s).reduce<number>(
        (n, v) => n + (Array.isArray(v) ? v.length : v instanceof Map ? v.size : 0),
        0,
      );
  }
}

/**
 * The state's size on disk (see {@link WorkerResult.db_bytes}). SQLite's after a checkpoint: its
 * WAL grows and shrinks with the cycles (to ~4 MB between SQLite's automatic checkpoints), the
 * file is what the state takes.
 */
function stateBytes(): number {
  if (state === 'sqlite') {
    watchdog.store.db.checkpoint();
    const wal = `${statePath}-wal`;
    return fs.statSync(statePath).size + (fs.existsSync(wal) ? fs.statSync(wal).size : 0);
  }
  const row = watchdog.store.db
    .prepare(
      `SELECT SUM(pg_total_relation_size(c.oid)) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    )
    .get() as { bytes: number };
  return row.bytes;
}

function fail(message: string): never {
  process.stderr.write(`cycle-worker: ${message}\n`);
  process.exit(2);
}

try {
  const { first, peakAfterFirst } = await firstCycle();
  const steady = await pairedCycles(STEADY_PAIRS);
  const changed: Record<string, number> = {};
  const churn = {
    ...(await pairedCycles(CHURN_PAIRS, async () => {
      for (const [kind, n] of Object.entries(await simControl<Record<string, number>>('churn', 0.01)))
        changed[kind] = (changed[kind] ?? 0) + n;
    })),
    changed,
  };
  // What is live once V8 collects: the peak above also holds garbage V8 had not yet collected.
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const afterGc = process.memoryUsage();
  const detect = await detectorWork();
  const jobs = values['per-job'] ? await perJob() : undefined;
  const perK = (stateCpu: number) => round(((detect.cpuMs + stateCpu) / detect.records) * 1000, 2);
  const openAlerts = (
    watchdog.store.db.prepare(`SELECT COUNT(*) AS n FROM alerts WHERE status = 'firing'`).get() as { n: number }
  ).n;
  const count = (table: string) =>
    (watchdog.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  const result: WorkerResult = {
    apps,
    state,
    first,
    steady,
    churn,
    records: detect.records,
    detect_cpu_ms: round(detect.cpuMs),
    diff_state_cpu_ms_per_1k: perK(steady.state_cpu_ms),
    diff_state_cpu_ms_per_1k_churn: perK(churn.state_cpu_ms),
    rss_start_mb: rssStart,
    peak_rss_mb: round(Math.max(peakAfterFirst, steady.rss_mb, churn.rss_mb)),
    peak_rss_first_mb: round(peakAfterFirst),
    heap_used_mb: round(process.memoryUsage().heapUsed / 1_048_576),
    rss_after_gc_mb: round(afterGc.rss / 1_048_576),
    heap_live_mb: round(afterGc.heapUsed / 1_048_576),
    db_bytes: stateBytes(),
    rows: {
      alerts: count('alerts'),
      events: count('events'),
      outbox: count('outbox'),
      notification_log: count('notification_log'),
    },
    open_alerts: openAlerts,
    heap_growing_percent: heapGrowingPercent,
    ...(jobs && { jobs }),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  process.disconnect?.();
  await watchdog.stop(1_000);
  await counting.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
