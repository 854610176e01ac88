/**
 * `npm run bench:economy`: what a user feels, on the daemon's defaults (10 requests/s, pages of 500,
 * 4 at once, the default schedules, the request budget's stretch) against a simulator that itself
 * refuses more than 10 requests/s (429 with Retry-After), at 1,000 and 10,000 apps:
 *
 * - `requests_per_hour`: the requests of one simulated hour, per job (`runs`, `maintenance`, …,
 *   and `context`/`delivery` for the reads after the cycles), counted at the simulator: deterministic
 *   for a seed, apart from the order concurrent jobs share the rate limit in.
 * - `time_to_alert_p50_s`, `time_to_alert_p95_s`: failed production runs injected at random moments
 *   of that hour (seeded), from the run's `updated_at` to the first delivery of its alert.
 * - `storm_told_s` (10,000 apps): 1,000 runs failing at once, until the last of them is delivered.
 *
 * On a SIMULATED clock: the watchdog and the simulator share a ManualClock; this harness starts each
 * job's cycle at its ticks, runs the delivery round every `notify.delivery.interval`, and moves the
 * clock to the next sleeper (a rate-limit wait, a retry, a tick) whenever no request is in flight.
 * So the rate limits and the schedules are simulated exactly, and the CPU and the loopback's
 * latency count as no time at all: timings are indicative of the schedule and the rate limit, not
 * of this machine. Memory and the cycle's ratio to its bare fetch are `npm run bench`'s.
 *
 *   npm run bench:economy                          # 1,000 and 10,000 apps
 *   npm run bench:economy -- --sizes 1000 --failures 20 --no-storm
 *   npm run bench:economy -- --sizes 10000 --storm-only --skip-jobs maintenance   # the storm alone, quicker
 *
 * One JSON line per size on stdout; a markdown table on stderr.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, type Dispatcher } from 'undici';
import { planBudget, type Estate } from '../src/app/request-budget.js';
import { Watchdog } from '../src/app/watchdog.js';
import type { SnapshotJob } from '../src/collectors/snapshot.js';
import { parseConfig } from '../src/config/load-config.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import { silentLogger } from '../src/lib/logger.js';
import { Prng } from '../packages/simulator/src/prng.js';
import { startSimulator, type RunningSimulator } from '../packages/simulator/src/index.js';
import { round } from './lib/measure.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** How long past the hour the harness waits for the failures injected near its end to be told. */
const DRAIN_MS = 10 * MINUTE;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    seed: { type: 'string', default: '1' },
    /** Failed production runs injected at random moments of the measured hour. */
    failures: { type: 'string', default: '40' },
    /** The simulator's own rate limit (requests/s per token). */
    'service-rps': { type: 'string', default: '10' },
    'no-storm': { type: 'boolean', default: false },
    /** Only the storm after the start-up cycles (no measured hour): quicker at 10,000 apps. */
    'storm-only': { type: 'boolean', default: false },
    /** Jobs left off (comma-separated), e.g. `maintenance`, whose 10,000 reads make the harness slow in real time. */
    'skip-jobs': { type: 'string', default: '' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    fs
      .readFileSync(new URL(import.meta.url))
      .toString()
      .split('*/')[0]!
      .replace(/^\/\*\*/, ''),
  );
  process.exit(0);
}

/** The default schedules (`jobs.*`), as intervals from the hour. */
const SKIPPED = new Set(values['skip-jobs'].split(',').filter(Boolean));
const SCHEDULE: readonly [SnapshotJob, number][] = (
  [
    ['servers', MINUTE],
    ['installers', 5 * MINUTE],
    ['runs', MINUTE],
    ['attention', 5 * MINUTE],
    ['urls', 15 * MINUTE],
    ['backups', HOUR],
    ['maintenance', 30 * MINUTE],
  ] as [SnapshotJob, number][]
).filter(([job]) => !SKIPPED.has(job));

/** An Agent that knows how many requests are in flight: the harness moves time only when none is. */
class InflightAgent extends Agent {
  inflight = 0;
  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.inflight += 1;
    let done = false;
    const end = () => {
      if (!done) this.inflight -= 1;
      done = true;
    };
    return super.dispatch(opts, {
      onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
      onRequestUpgrade: (c, s, h, socket) => handler.onRequestUpgrade?.(c, s, h, socket),
      onResponseStart: (c, status, headers, message) => handler.onResponseStart?.(c, status, headers, message),
      onResponseData: (c, chunk) => handler.onResponseData?.(c, chunk),
      onResponseEnd: (c, trailers) => {
        end();
        handler.onResponseEnd?.(c, trailers);
      },
      onResponseError: (c, err) => {
        end();
        handler.onResponseError?.(c, err);
      },
    });
  }
}

/** One size's figures. */
export interface EconomyResult {
  apps: number;
  clock: 'simulated';
  service_rps: number;
  requests_per_hour: Record<string, number> & { total: number };
  /** What the request budget planned (the daemon's estimate, stretched). */
  budget_planned_per_hour: number;
  budget_stretch: Record<string, number>;
  time_to_alert_p50_s: number | null;
  time_to_alert_p95_s: number | null;
  failures_injected: number;
  failures_told: number;
  rate_limited_429: number;
  /** `told_s`: until the last of the `told` was delivered (all of them when `told` is `runs`). */
  storm?: { runs: number; told: number; told_s: number | null };
  skipped_jobs?: string[];
  storm_only?: boolean;
}

const realTick = () => new Promise((resolve) => setTimeout(resolve, 1));

/** A running size: the simulator, the watchdog and the harness's actors on one simulated clock. */
class Harness {
  readonly busy = new Set<Promise<unknown>>();
  #minute = 0;
  /** The job whose requests are being counted, per actor; requests are attributed by the simulator's log. */
  constructor(
    readonly sim: RunningSimulator,
    readonly wd: Watchdog,
    readonly clock: ManualClock,
    readonly agent: InflightAgent,
  ) {}

  /** Starts an actor (a cycle, a delivery round); the harness waits for it before moving time on. */
  spawn(work: () => Promise<unknown>): Promise<unknown> {
    const p = work().finally(() => this.busy.delete(p));
    this.busy.add(p);
    return p;
  }

  /** Waits until nothing runs but sleepers on the clock (no request in flight, twice in a row). */
  async quiet(): Promise<void> {
    let calm = 0;
    while (calm < 2) {
      await realTick();
      calm = this.agent.inflight === 0 ? calm + 1 : 0;
    }
  }

  /** Runs simulated time up to `until` (and on until every actor is done): sleeps and requests, then the clock moves. */
  async runUntil(until: number, tick: (now: number) => void): Promise<void> {
    for (;;) {
      tick(this.clock.now());
      await this.quiet();
      const now = this.clock.now();
      if (process.env.ECONOMY_TRACE && Math.floor(now / MINUTE) !== this.#minute) {
        this.#minute = Math.floor(now / MINUTE);
        process.stderr.write(
          `${new Date(now).toISOString()} busy ${this.busy.size} requests ${this.sim.control.requests().length}\n`,
        );
      }
      if (now >= until && this.busy.size === 0) return;
      const next = this.clock.nextWakeAt();
      // Past `until`, only the actors still under way move time: to their next wake-up.
      const at = now >= until ? next : Math.min(next ?? Infinity, until, nextTickAfter(now));
      if (at !== undefined) this.clock.set(Math.max(at, now));
    }
  }
}

/** The next whole second (the granularity of ticks and injections). */
function nextTickAfter(now: number): number {
  return Math.floor(now / 1000) * 1000 + 1000;
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function measure(apps: number): Promise<EconomyResult> {
  const seed = Number(values.seed);
  const serviceRps = Number(values['service-rps']);
  const start = Date.UTC(2026, 10, 2, 0, 0, 0);
  const clock = new ManualClock(start);
  const sim = await startSimulator({ apps, seed, clock, rateLimit: { rps: serviceRps } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-economy-'));
  const agent = new InflightAgent({ keepAliveTimeout: 30_000, connections: 8 });
  const config = parseConfig(
    [
      'api: { base_url: "${SIM_URL}", token: "${TOKEN}" }',
      'state: { path: ./state.db }',
      'notify: { channels: [{ name: console, type: log }], routes: [{ channels: [console] }] }',
      'server: { listen: "off" }',
    ].join('\n'),
    { SIM_URL: sim.baseUrl, TOKEN: sim.adminToken },
    'economy.yaml',
    { baseDir: dir },
  );
  const wd = Watchdog.open({ config, clock, logger: silentLogger, dispatcher: agent });
  const h = new Harness(sim, wd, clock, agent);
  try {
    // The budget as the daemon plans it at start, from the estate's counts.
    const estate: Estate = {
      apps: sim.control.state.apps.size,
      runs: sim.control.state.runs.size,
      urls: sim.control.state.urls.size,
      backups: sim.control.state.backups.size,
      servers: sim.control.state.servers.size,
      installers: sim.control.state.installers.size,
      namespaces: 1,
    };
    const plan = planBudget(
      estate,
      {
        pageSize: config.api.page_size,
        intervals: new Map(SCHEDULE),
        runStateLists: config.checks.failed_runs.failed_states.length + config.checks.stuck_runs.active_states.length,
        readsPerApp: config.checks.restore_points.enabled ? 2 : 1,
      },
      config.api.requests_per_second,
    );
    const stretch = new Map(plan.jobs.map((j) => [j.job, j.stretch]));

    // Start-up: the first cycle of every job, then the runs job's second (its memory warm).
    void h.spawn(() => wd.runOnce(SCHEDULE.map(([job]) => job)));
    await h.runUntil(clock.now(), () => undefined);
    const t0 = Math.ceil((clock.now() + MINUTE) / HOUR) * HOUR;
    clock.set(t0 - MINUTE);
    void h.spawn(() => wd.runOnce(['runs']));
    await h.runUntil(clock.now(), () => undefined);
    clock.set(t0);
    sim.control.resetRequests();

    // The measured hour: each job at its ticks (skipped while its last cycle runs, as noOverlap
    // does), the delivery round every notify.delivery.interval, failures at random moments.
    const rng = new Prng(seed * 7919 + apps);
    const production = [...sim.control.state.apps.values()].filter(
      (a) => a.envType === 'production' && a.state === 'running' && a.deployedAt !== null,
    );
    const injections = Array.from({ length: Number(values.failures) }, () => t0 + rng.int(1, 3599) * 1000).sort(
      (a, b) => a - b,
    );
    const injected: { at: number; runId: number }[] = [];
    const running = new Map<string, Promise<unknown>>();
    const nextTick = new Map<string, number>(SCHEDULE.map(([job]) => [job, t0]));
    const deliveryEvery = config.notify.delivery.interval;
    nextTick.set('delivery', t0);
    let ticksUntil = t0 + HOUR;
    const tick = (now: number) => {
      while (injections.length > 0 && injections[0]! <= now) {
        const at = injections.shift()!;
        const app = rng.pick(production);
        const run = sim.control.addRun({ appId: app.id, action: 'update', state: 'error', startedAgoMs: 3 * MINUTE });
        injected.push({ at, runId: run.id });
      }
      for (const [job, every] of [...SCHEDULE, ['delivery', deliveryEvery] as const]) {
        const due = nextTick.get(job)!;
        // The hour is [t0, t0 + 1h): a tick at its end belongs to the next hour (the storm's).
        if (due > now || due >= ticksUntil) continue;
        nextTick.set(job, due + every);
        if (running.has(job)) continue;
        const k = stretch.get(job as SnapshotJob) ?? 1;
        if (k > 1 && Math.floor(due / every) % k !== 0) continue;
        const work = job === 'delivery' ? () => wd.deliverDue() : () => wd.runOnce([job]);
        running.set(
          job,
          h.spawn(work).finally(() => running.delete(job)),
        );
      }
    };
    if (values['storm-only']) {
      ticksUntil = t0;
      injections.length = 0;
    }
    await h.runUntil(values['storm-only'] ? t0 : t0 + HOUR, tick);
    const hour = sim.control.requests();
    const byFn = countByJob(hour);

    // A failure injected near the hour's end is told after it: the daemon's ticks go on (their
    // requests no longer counted) until every one is, for at most DRAIN_MS.
    ticksUntil = Infinity;
    const toldAll = () => injected.every(({ runId }) => firstSentAt(wd).has(runId));
    for (let waited = 0; waited < DRAIN_MS && !toldAll(); waited += MINUTE) {
      await h.runUntil(clock.now() + MINUTE, tick);
    }

    // Time to alert: from the injection (the run's updated_at) to its first delivery.
    const sentAt = firstSentAt(wd);
    const delays = injected
      .map(({ at, runId }) => (sentAt.has(runId) ? (sentAt.get(runId)! - at) / 1000 : null))
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);

    let storm: EconomyResult['storm'];
    if (apps >= 10_000 && !values['no-storm']) storm = await runStorm(h, rng, tick);

    return {
      apps,
      clock: 'simulated',
      service_rps: serviceRps,
      requests_per_hour: byFn,
      budget_planned_per_hour: Math.round(plan.plannedPerHour),
      budget_stretch: Object.fromEntries(plan.jobs.filter((j) => j.stretch > 1).map((j) => [j.job, j.stretch])),
      time_to_alert_p50_s: percentile(delays, 50),
      time_to_alert_p95_s: percentile(delays, 95),
      failures_injected: injected.length,
      failures_told: delays.length,
      rate_limited_429: hour.filter((r) => r.status === 429).length,
      ...(storm && { storm }),
      ...(SKIPPED.size > 0 && { skipped_jobs: [...SKIPPED] }),
      ...(values['storm-only'] && { storm_only: true }),
    };
  } finally {
    await wd.stop(0);
    await agent.close();
    await sim.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** 1,000 runs failing at once, then the daemon's ticks until every one is delivered (at most 15 minutes). */
async function runStorm(
  h: Harness,
  rng: Prng,
  tick: (now: number) => void,
): Promise<NonNullable<EconomyResult['storm']>> {
  const { sim, clock } = h;
  const apps = [...sim.control.state.apps.values()].filter((a) => a.state === 'running' && a.deployedAt !== null);
  const at = clock.now();
  // 1,000 distinct apps: two failures of one app and action are one alert (the newer).
  const ids = new Set<number>();
  const chosen = new Set<number>();
  while (ids.size < 1_000) {
    const app = rng.pick(apps);
    if (chosen.has(app.id)) continue;
    chosen.add(app.id);
    const run = sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', startedAgoMs: MINUTE });
    ids.add(run.id);
  }
  let told = 0;
  let last: number | null = null;
  for (let minute = 1; minute <= 15 && told < ids.size; minute++) {
    await h.runUntil(at + minute * MINUTE, tick);
    const sent = firstSentAt(h.wd);
    const times = [...ids].flatMap((id) => sent.get(id) ?? []);
    told = times.length;
    // The last of them told so far: when every one is, the storm's figure.
    if (told > 0) last = Math.max(...times);
  }
  return { runs: ids.size, told, told_s: last === null ? null : (last - at) / 1000 };
}

/**
 * When each failed_runs alert was first told, by run id: its first delivery (outbox `sent_at`), or
 * when it was held under another alert that says it (`inhibited`: a run of an app on a server in a
 * bad state is told by the server's alert, `notify.inhibit.bad_servers`), from that row's creation.
 */
function firstSentAt(wd: Watchdog): Map<number, number> {
  const rows = wd.store.db
    .prepare(
      `SELECT fingerprint, MIN(CASE WHEN status = 'sent' THEN sent_at ELSE created_at END) AS at FROM outbox
       WHERE (status = 'sent' OR (status = 'held' AND decision = 'inhibited')) AND fingerprint LIKE 'failed_runs/run/%'
       GROUP BY fingerprint`,
    )
    .all() as { fingerprint: string; at: number }[];
  return new Map(rows.map((r) => [Number(r.fingerprint.slice('failed_runs/run/'.length)), r.at]));
}

/**
 * The hour's requests by job. The simulator logs functions, not jobs: each function is put down to
 * the job that calls it (runs.get to the runs job and the context reader alike: `runs`).
 */
function countByJob(requests: readonly { fn: string }[]): EconomyResult['requests_per_hour'] {
  const JOB_OF: Record<string, string> = {
    'runs.list': 'runs',
    'runs.get': 'runs',
    'apps.list': 'apps.list (shared)',
    'apps.get': 'maintenance',
    'restore_points.list': 'context',
    'logs.tail': 'context',
    'urls.list': 'urls',
    'backups.list': 'backups',
    'servers.list': 'servers',
    'installers.list': 'installers',
    'attention.list': 'attention',
    whoami: 'whoami',
  };
  const out: Record<string, number> = {};
  for (const r of requests) {
    const job = JOB_OF[r.fn] ?? r.fn;
    out[job] = (out[job] ?? 0) + 1;
  }
  return { ...out, total: requests.length };
}

const results: EconomyResult[] = [];
for (const size of values.sizes.split(',').map((s) => Number(s.trim()))) {
  const result = await measure(size);
  results.push(result);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
const lines = [
  '| apps | requests/h (total) | runs job | maintenance | p50 time to alert | p95 | storm of 1,000 told |',
  '|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.apps.toLocaleString('en')} | ${r.requests_per_hour.total} | ${r.requests_per_hour.runs ?? 0} | ${r.requests_per_hour.maintenance ?? 0} | ${r.time_to_alert_p50_s ?? '-'} s | ${r.time_to_alert_p95_s ?? '-'} s | ${r.storm?.told_s === undefined ? '-' : r.storm.told_s === null ? `none of ${r.storm.runs} in 15 min` : `${r.storm.told} of ${r.storm.runs} by ${round(r.storm.told_s)} s`} |`,
  ),
];
process.stderr.write(
  `${lines.join('\n')}\n(simulated clock: the rate limits and schedules are simulated; CPU and latency count as none)\n`,
);
