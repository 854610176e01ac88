/**
 * `npm run bench`: one full `check` cycle of every job against the simulator at 1,000 and 10,000
 * apps, steady state and after 1% churn, beside the bare-fetch lower bound of the same requests,
 * with the state in a SQLite file and in PostgreSQL.
 *
 *   npm run bench                         # sizes 1000,10000; rate limit off, then 1000 rps; SQLite, then PostgreSQL
 *   npm run bench -- --sizes 1000 --rps off --markdown docs/benchmarks-latest.md
 *   npm run bench -- --states sqlite      # without PostgreSQL
 *   npm run bench -- --per-job            # also each job's steady cycle alone, beside its own bound
 *
 * Each size and rate limit runs the simulator in one child process and the watchdog in another
 * (bundled to plain JavaScript first when esbuild is available, so the TypeScript loader's memory is
 * not counted), so CPU time and peak RSS are the watchdog's own; the bare-fetch bounds are fetched
 * here, in the parent, when the worker asks over IPC. PostgreSQL is a throwaway cluster started
 * here as the tests start theirs (test/helpers/postgres.ts), durable as a production server is
 * (fsync and full-page writes on), one fresh database per run; its server's CPU and memory are
 * not the watchdog's and are not counted. Standard output: one JSON line per size, rate limit and
 * state (`apps`, `requests_per_second`, `state`, `cycle_ms`, `bare_fetch_ms`, `ratio`, `requests`,
 * `cpu_ms`, `state_ms`, `peak_rss_mb`, `event_loop_lag_p99_ms`, … for the steady-state cycle;
 * `churn` and `first` hold the other cycles, each with its own `event_loop_lag_p99_ms`). Standard error: a markdown table per rate limit, and the targets, which are
 * SQLite's (the default state): at 10,000 apps, rate limit off, the steady cycle within
 * {@link TARGET_RATIO}× the bare fetch and the peak under {@link TARGET_PEAK_MB} MB. A target
 * missed makes the exit code 1; PostgreSQL's figures are reported, not targeted.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BoundAnswer, BoundRequest, CycleFigures, RssAnswer, RssRequest, WorkerResult } from './cycle-worker.js';
import { bareFetch } from './lib/bare-fetch.js';
import { spawnSimChild, type SimChild } from './lib/sim-child.js';
import { round, watchRss } from './lib/measure.js';
import { createMemoryCgroup } from './lib/memory-cgroup.js';
import { DAEMON_ENV, DAEMON_NODE_OPTIONS } from '../src/cli/memory-settings.js';
import { postgresBinaries, startPostgres, type PostgresCluster } from '../test/helpers/postgres.js';
import { BENCH_STATES, type BenchState } from './lib/bench-states.js';
import type { EconomyResult } from './economy-bench.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKER_TS = path.join(ROOT, 'bench', 'cycle-worker.ts');
/** The PostgreSQL connection's worker thread, bundled beside the worker (see `bundleWorker`). */
const POSTGRES_WORKER_TS = path.join(ROOT, 'src', 'state', 'postgres-worker.ts');

const ECONOMY_TS = path.join(ROOT, 'bench', 'economy-bench.ts');

/** The targets (issue 23), on SQLite at {@link TARGET_APPS} apps with no rate limit: the steady cycle's ratio to the bare fetch… */
const TARGET_RATIO = 1.15;
/** …and the peak RSS (MB, at most). */
const TARGET_PEAK_MB = 128;
const TARGET_APPS = 10_000;
/** What users feel, on the daemon's defaults against a service allowing 10 requests/s (`economy-bench.ts`): requests an hour at {@link TARGET_APPS} apps, in all… */
const TARGET_REQUESTS_PER_HOUR = 20_000;
/** …and of the runs job… */
const TARGET_RUNS_PER_HOUR = 2_000;
/** …the p95 time to alert of a failed production run (s), at every size… */
const TARGET_TIME_TO_ALERT_P95_S = 90;
/** …and the storm of 1,000 failures told in full (s). */
const TARGET_STORM_S = 180;

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    seed: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '4' },
    'page-size': { type: 'string', default: '1000' },
    /**
     * `api.requests_per_second` values to run, comma-separated: `off` (the headline: the watchdog's
     * own cost) and the config's maximum, 1000 (what the politeness limit adds).
     */
    rps: { type: 'string', default: 'off,1000' },
    markdown: { type: 'string' },
    /**
     * Node options of the worker (the watchdog), e.g. `--node-flags="--max-semi-space-size=8"`
     * (with `=`: parseArgs refuses a separate value that starts with a dash).
     * Default: the daemon's own (`DAEMON_NODE_OPTIONS`, as the Dockerfile starts it). The worker
     * also gets the daemon's environment (`DAEMON_ENV`) and sets V8's old-generation growth as
     * `bin.ts` does, unless these options set it.
     */
    'node-flags': { type: 'string', default: DAEMON_NODE_OPTIONS.join(' ') },
    /**
     * The defaults of V8 and glibc, as before the daemon's memory settings: no node options, no
     * environment of the daemon's, no growth setting.
     */
    'v8-defaults': { type: 'boolean', default: false },
    /**
     * Run the worker in a cgroup with this much memory, as a container or systemd unit with a
     * memory limit would (Node then sizes V8's heap from the limit). Needs root and cgroups.
     */
    'memory-limit-mb': { type: 'string' },
    /** Run the worker under tsx instead of a bundle (adds the loader's ~35 MB to RSS). */
    'no-bundle': { type: 'boolean', default: false },
    /** Where the watchdog keeps its state, comma-separated: `sqlite` (the default's), `postgres`. */
    states: { type: 'string', default: BENCH_STATES.join(',') },
    /** Leave out what users feel (`economy-bench.ts`: requests an hour, time to alert, the storm). */
    'no-economy': { type: 'boolean', default: false },
    /** Also time each job's steady cycle alone beside the bound of its own requests (`jobs`). */
    'per-job': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  // This file's own comment, then where the user-felt figures are measured.
  process.stdout.write(
    `${fs
      .readFileSync(fileURLToPath(import.meta.url), 'utf8')
      .split('*/')[0]!
      .replace(/^\/\*\*\n/, '')}\n` +
      ' What users feel (requests an hour per job, time to alert p50/p95, the storm of 1,000 failures),\n' +
      ' on the daemon defaults against a simulator limited to 10 requests/s, on a simulated clock, is\n' +
      ' measured first for each size (in a child process: `economy-bench.ts`) and joins its JSON lines\n' +
      ' (`requests_per_hour`, `time_to_alert_p50_s`, `time_to_alert_p95_s`, `storm`); --no-economy leaves it out.\n' +
      ' Alone: npm run bench:economy [-- --sizes 1000,10000 --failures 40 --service-rps 10 --no-storm]\n',
  );
  process.exit(0);
}
/** The worker's node options: the daemon's unless asked otherwise. */
const nodeFlags = values['v8-defaults'] ? '' : values['node-flags'];
const sizes = values.sizes.split(',').map((s) => Number(s.trim()));
const rates = values.rps.split(',').map((s) => s.trim());
const states = values.states.split(',').map((s) => {
  const state = BENCH_STATES.find((known) => known === s.trim());
  if (!state) throw new Error(`--states: ${JSON.stringify(s)} is not one of ${BENCH_STATES.join(', ')}`);
  return state;
});

/**
 * The worker as one JavaScript file next to node_modules (so its packages resolve), or null. The
 * PostgreSQL connection's worker thread is bundled beside it, as `postgres-worker.js`: where the
 * built daemon has it (`src/state/postgres-channel.ts` starts it from beside itself), in a folder
 * whose package.json makes `.js` an ES module as the project's does.
 */
function bundleWorker(): string | null {
  if (values['no-bundle']) return null;
  const esbuild = path.join(ROOT, 'node_modules', '.bin', 'esbuild');
  if (!fs.existsSync(esbuild)) return null;
  // A folder of this run's own: checkouts that share node_modules (git worktrees) may bench at once.
  const cache = path.join(ROOT, 'node_modules', '.cache');
  fs.mkdirSync(cache, { recursive: true });
  const outDir = fs.mkdtempSync(path.join(cache, 'deploy-watchdog-bench-'));
  process.once('exit', () => fs.rmSync(outDir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(outDir, 'package.json'), '{ "type": "module" }\n');
  const out = path.join(outDir, 'cycle-worker.mjs');
  for (const [entry, outfile] of [
    [WORKER_TS, out],
    [POSTGRES_WORKER_TS, path.join(outDir, 'postgres-worker.js')],
  ] as const) {
    const r = spawnSync(
      esbuild,
      [
        entry,
        '--bundle',
        '--platform=node',
        '--format=esm',
        '--packages=external',
        '--target=node20',
        `--outfile=${outfile}`,
        '--log-level=error',
      ],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) {
      process.stderr.write(`bench: bundling failed, running under tsx instead:\n${r.stderr}\n`);
      return null;
    }
  }
  return out;
}

/**
 * The bare-fetch bound the worker asks for, fetched in this process so it never counts toward the
 * worker's RSS. The simulator's request log is emptied before each loop, as the worker does before
 * each cycle: once full (100,000 entries) it drops its oldest entry on every request, which slowed
 * whichever phase came later.
 */
async function bound(ask: BoundRequest, sim: SimChild): Promise<BoundAnswer> {
  const options = { origin: sim.baseUrl, token: sim.adminToken };
  let bare = Infinity;
  let serial = Infinity;
  for (let i = 0; i < ask.runs; i++) {
    await sim.control('resetRequests');
    bare = Math.min(bare, (await bareFetch(ask.requests, { ...options, concurrency: ask.concurrency })).ms);
    if (!ask.serial) continue;
    await sim.control('resetRequests');
    serial = Math.min(serial, (await bareFetch(ask.requests, { ...options, concurrency: 1 })).ms);
  }
  return { bare_ms: bare, serial_ms: ask.serial ? serial : 0 };
}

function runWorker(
  entry: string | null,
  args: string[],
  sim: SimChild,
  extraEnv: NodeJS.ProcessEnv,
): Promise<WorkerResult> {
  const flags = nodeFlags.split(/\s+/).filter(Boolean);
  const argv = [...flags, ...(entry ? [entry, ...args] : ['--import', 'tsx', WORKER_TS, ...args])];
  const cgroup = values['memory-limit-mb'] ? createMemoryCgroup(Number(values['memory-limit-mb'])) : undefined;
  const { command, args: commandArgs } = cgroup
    ? cgroup.wrap([process.execPath, ...argv])
    : { command: process.execPath, args: argv };
  return new Promise<WorkerResult>((resolve, reject) => {
    const env = { ...process.env, ...(values['v8-defaults'] ? {} : DAEMON_ENV), ...extraEnv };
    const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], cwd: ROOT, env });
    let rss: { stop(): number } | undefined;
    child.on('message', (ask: BoundRequest | RssRequest) => {
      if (ask.type === 'rss') {
        if (ask.action === 'start') rss = watchRss(ask.pid, 10);
        child.send({ rss_mb: ask.action === 'stop' ? (rss?.stop() ?? 0) : 0 } satisfies RssAnswer);
        return;
      }
      bound(ask, sim).then(
        (answer) => child.send(answer),
        (err: unknown) => {
          child.kill();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line) return reject(new Error(`cycle worker exited with ${String(code)}: ${out.slice(-500)}`));
      resolve(JSON.parse(line) as WorkerResult);
    });
  }).finally(() => cgroup?.remove());
}

/** ", old generation collected past +N% of live" when the worker set it (as the daemon does). */
function r0HeapGrowth(): string {
  const percent = [...results.values()].flat()[0]?.heap_growing_percent;
  return percent ? `, old generation collected once it grows ${percent}% past live (as the daemon sets it)` : '';
}

/** How a state is named in the tables. */
const STATE_NAMES: Record<BenchState, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

function row(label: string, c: CycleFigures, r: WorkerResult, perK: number): string {
  return `| ${r.apps.toLocaleString('en')} | ${STATE_NAMES[r.state]} | ${label} | ${c.cycle_ms} | ${c.bare_fetch_ms} | **${c.ratio}×** | ${c.requests} | ${round(c.bytes / 1_048_576)} | ${c.cpu_ms} | ${c.state_ms} | ${perK} | ${r.peak_rss_mb} (${r.rss_start_mb}) | ${r.heap_live_mb} | ${c.event_loop_lag_p99_ms} |`;
}

/**
 * A throwaway PostgreSQL for the runs on it, or undefined when none are asked for. Durable as a
 * production server (the tests' cluster turns fsync and full-page writes off): a commit waits for
 * its WAL to reach the disk, as it would in production.
 */
function benchPostgres(): PostgresCluster | undefined {
  if (!states.includes('postgres')) return undefined;
  if (!postgresBinaries()) {
    throw new Error(
      '--states postgres needs PostgreSQL installed (apt-get install postgresql), or give --states sqlite',
    );
  }
  return startPostgres({ durable: true });
}

/** The state's size per 1,000 apps, in kB. */
function perThousandApps(r: WorkerResult): number {
  return round(r.db_bytes / 1024 / (r.apps / 1000));
}

/**
 * What users feel at `apps` (`economy-bench.ts`, in a child process of its own: its simulator and
 * watchdog share a simulated clock, so the machine's load moves none of its figures).
 */
function runEconomy(apps: number): Promise<EconomyResult> {
  const args = ['--import', 'tsx', ECONOMY_TS, '--sizes', String(apps), '--seed', values.seed];
  return new Promise<EconomyResult>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line)
        return reject(new Error(`economy bench exited with ${String(code)}: ${out.slice(-500)}`));
      resolve(JSON.parse(line) as EconomyResult);
    });
  });
}

const entry = bundleWorker();
const pg = benchPostgres();
/** What users feel, by size (absent with --no-economy). */
const economies = new Map<number, EconomyResult>();
/** Results by rate limit: sizes in order, each size's states in order. */
const results = new Map<string, WorkerResult[]>(rates.map((rps) => [rps, []]));
try {
  for (const apps of sizes) {
    if (!values['no-economy']) {
      process.stderr.write(
        `bench: ${apps} apps, what users feel (defaults, service at 10 requests/s, simulated clock)\n`,
      );
      economies.set(apps, await runEconomy(apps));
    }
    for (const rps of rates) {
      for (const state of states) {
        // A fresh simulator per run: the churn cycle changes it, and each run starts from the same estate.
        const sim = await spawnSimChild({ apps, seed: Number(values.seed), maxLimit: 1000 });
        process.stderr.write(
          `bench: ${apps} apps, requests_per_second ${rps}, state on ${STATE_NAMES[state]}, seeded in ${sim.seedMs} ms (${JSON.stringify(sim.stats)})\n`,
        );
        try {
          const args = [
            '--base-url',
            sim.baseUrl,
            '--token',
            sim.adminToken,
            '--apps',
            String(apps),
            '--concurrency',
            values.concurrency,
            '--page-size',
            values['page-size'],
            '--rps',
            rps,
            '--state',
            state,
            ...(values['v8-defaults'] ? ['--v8-defaults'] : []),
            ...(values['per-job'] ? ['--per-job'] : []),
          ];
          // A fresh database per run, as the SQLite runs get a fresh file; its URL by the environment, as a daemon's.
          const env = state === 'postgres' ? { BENCH_DATABASE_URL: pg!.url(pg!.createDatabase()) } : {};
          const r = await runWorker(entry, args, sim, env);
          results.get(rps)!.push(r);
          process.stdout.write(`${JSON.stringify(jsonLine(r, rps))}\n`);
        } finally {
          await sim.close();
        }
      }
    }
  }
} finally {
  pg?.close();
}

/** The JSON line of one run (see the file's comment). */
function jsonLine(r: WorkerResult, rps: string) {
  const s = r.steady;
  return {
    apps: r.apps,
    requests_per_second: rps === 'off' ? 'off' : Number(rps),
    state: r.state,
    cycle_ms: s.cycle_ms,
    bare_fetch_ms: s.bare_fetch_ms,
    ratio: s.ratio,
    ratios: s.ratios,
    requests: s.requests,
    bytes: s.bytes,
    cpu_ms: s.cpu_ms,
    state_ms: s.state_ms,
    peak_rss_mb: r.peak_rss_mb,
    rss_mb: s.rss_mb,
    event_loop_lag_p99_ms: s.event_loop_lag_p99_ms,
    peak_rss_first_mb: r.peak_rss_first_mb,
    rss_start_mb: r.rss_start_mb,
    rss_after_gc_mb: r.rss_after_gc_mb,
    heap_live_mb: r.heap_live_mb,
    diff_state_cpu_ms_per_1k: r.diff_state_cpu_ms_per_1k,
    records: r.records,
    churn: { ...r.churn, diff_state_cpu_ms_per_1k: r.diff_state_cpu_ms_per_1k_churn },
    first: r.first,
    db_bytes: r.db_bytes,
    rows: r.rows,
    open_alerts: r.open_alerts,
    bundled: entry !== null,
    node_flags: nodeFlags,
    daemon_env: values['v8-defaults'] ? null : DAEMON_ENV,
    heap_growing_percent: r.heap_growing_percent,
    memory_limit_mb: values['memory-limit-mb'] ? Number(values['memory-limit-mb']) : null,
    ...(r.jobs && { jobs: r.jobs }),
    node: process.version,
    cpus: os.cpus().length,
    ...economyFields(economies.get(r.apps)),
  };
}

/** What users feel at a size, in its JSON lines (the same for every rate limit and state: it is on the defaults). */
function economyFields(e: EconomyResult | undefined) {
  if (!e) return {};
  return {
    requests_per_hour: e.requests_per_hour,
    time_to_alert_p50_s: e.time_to_alert_p50_s,
    time_to_alert_p95_s: e.time_to_alert_p95_s,
    time_to_alert_clock: e.clock,
    failures_injected: e.failures_injected,
    failures_told: e.failures_told,
    service_rps: e.service_rps,
    ...(e.storm && { storm: e.storm }),
  };
}

const table = [
  `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; page_size ${values['page-size']}, concurrency ${values.concurrency}${entry ? '' : ' (worker under tsx: +~35 MB RSS)'}${
    values['v8-defaults']
      ? '; worker with the defaults of V8 and glibc'
      : `; worker run as the daemon: \`${Object.entries(DAEMON_ENV)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} node ${nodeFlags}\``
  }${r0HeapGrowth()}${values['memory-limit-mb'] ? `; worker in a cgroup limited to ${values['memory-limit-mb']} MB` : ''}.`,
];
for (const [rps, rows] of results) {
  table.push(
    '',
    rps === 'off'
      ? "`requests_per_second: off` (no client-side rate limit: the watchdog's own cost):"
      : `\`requests_per_second: ${rps}\` (the client-side rate limit in force):`,
    '',
    '| apps | state | cycle | cycle ms | bare fetch ms | ratio | requests | MB read | CPU ms | state ms | diff+state CPU ms / 1k records | peak RSS MB (at start) | live heap MB after full GC | event-loop lag p99 ms |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.flatMap((r) => [
      row('steady', r.steady, r, r.diff_state_cpu_ms_per_1k),
      row('1% churn', r.churn, r, r.diff_state_cpu_ms_per_1k_churn),
    ]),
    '',
    `State at the end (first, steady and churn cycles: ${rows.map((r) => `${r.apps.toLocaleString('en')} apps on ${STATE_NAMES[r.state]} ${round(r.db_bytes / 1_048_576)} MB, ${perThousandApps(r)} kB per 1,000 apps, ${r.rows.alerts} alerts, ${r.rows.events} events, ${r.rows.outbox} outbox rows`).join('; ')}).`,
  );
  table.push(
    '',
    `Event-loop lag, p99 during the cycle (ms; the probes, the console and Slack's acknowledgements wait as long): ${rows.map((r) => `${r.apps.toLocaleString('en')} apps on ${STATE_NAMES[r.state]}: first ${r.first.event_loop_lag_p99_ms}, steady ${r.steady.event_loop_lag_p99_ms}, churn ${r.churn.event_loop_lag_p99_ms}`).join('; ')}.`,
  );
  for (const state of states) {
    const own = rows.filter((r) => r.state === state);
    if (own.length < 2) continue;
    const a = own[0]!;
    const b = own.at(-1)!;
    const scale = b.apps / a.apps;
    const growth = (x: number, y: number) => round(y / x / scale, 2);
    table.push(
      '',
      `Growth on ${STATE_NAMES[state]} from ${a.apps} to ${b.apps} apps, per app (1.0 = linear): cycle time ${growth(a.steady.cycle_ms, b.steady.cycle_ms)}, CPU ${growth(a.steady.cpu_ms, b.steady.cpu_ms)}, requests ${growth(a.steady.requests, b.steady.requests)}, bytes ${growth(a.steady.bytes, b.steady.bytes)}.`,
    );
  }
}
for (const r of [...results.values()].flat().filter((x) => x.jobs)) {
  table.push(
    '',
    `Each job's steady cycle alone (${r.apps.toLocaleString('en')} apps on ${STATE_NAMES[r.state]}; medians of its rounds), beside the bare fetch of its own requests:`,
    '',
    '| job | requests | wall ms | CPU ms | bare fetch ms | ratio |',
    '|---|---:|---:|---:|---:|---:|',
    ...r.jobs!.map(
      (j) => `| ${j.job} | ${j.requests} | ${j.wall_ms} | ${j.cpu_ms} | ${j.bare_fetch_ms} | ${j.ratio} |`,
    ),
  );
}
if (economies.size > 0) {
  table.push(
    '',
    'What users feel, on the defaults (`requests_per_second: 10`, pages of 500, the default schedules) against a service allowing 10 requests/s, on a simulated clock (`economy-bench.ts`):',
    '',
    '| apps | requests an hour | runs job | maintenance | p50 time to alert | p95 time to alert | storm of 1,000 told |',
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...[...economies.values()].map(
      (e) =>
        `| ${e.apps.toLocaleString('en')} | ${e.requests_per_hour.total} | ${e.requests_per_hour.runs ?? 0} | ${e.requests_per_hour.maintenance ?? 0} | ${e.time_to_alert_p50_s ?? '-'} s | ${e.time_to_alert_p95_s ?? '-'} s | ${stormText(e)} |`,
    ),
  );
}
const verdict = targets();
table.push('', verdict.text);
if (!verdict.met) process.exitCode = 1;

/**
 * The targets, SQLite's (see the file's comment), on the run that measures them; "not measured"
 * when this run had none (another size, a rate limit, PostgreSQL only): that is not a miss.
 */
function targets(): { text: string; met: boolean } {
  const word = (ok: boolean) => (ok ? 'met' : '**missed**');
  const lines: string[] = [];
  let met = true;
  const r = results.get('off')?.find((x) => x.apps === TARGET_APPS && x.state === 'sqlite');
  if (!r) {
    lines.push(`Targets (SQLite, ${TARGET_APPS.toLocaleString('en')} apps, rate limit off): not measured by this run.`);
  } else {
    const ratio = r.steady.ratio <= TARGET_RATIO;
    const peak = r.peak_rss_mb <= TARGET_PEAK_MB;
    met &&= ratio && peak;
    lines.push(
      `Targets (SQLite, ${TARGET_APPS.toLocaleString('en')} apps, rate limit off): steady cycle ${r.steady.ratio}× the bare fetch (at most ${TARGET_RATIO}×: ${word(ratio)}); peak RSS ${r.peak_rss_mb} MB (at most ${TARGET_PEAK_MB} MB: ${word(peak)}). PostgreSQL's figures are reported, not targeted.`,
    );
  }
  for (const e of economies.values()) {
    const p95 = e.time_to_alert_p95_s !== null && e.time_to_alert_p95_s <= TARGET_TIME_TO_ALERT_P95_S;
    const all = e.failures_told === e.failures_injected;
    const parts = [
      `p95 time to alert ${e.time_to_alert_p95_s ?? '-'} s (at most ${TARGET_TIME_TO_ALERT_P95_S} s: ${word(p95)}), ${e.failures_told} of ${e.failures_injected} failures told (${word(all)})`,
    ];
    met &&= p95 && all;
    if (e.apps === TARGET_APPS) {
      const total = e.requests_per_hour.total <= TARGET_REQUESTS_PER_HOUR;
      const runs = (e.requests_per_hour.runs ?? 0) <= TARGET_RUNS_PER_HOUR;
      parts.push(
        `${e.requests_per_hour.total} requests an hour (at most ${TARGET_REQUESTS_PER_HOUR}: ${word(total)})`,
        `the runs job ${e.requests_per_hour.runs ?? 0} (at most ${TARGET_RUNS_PER_HOUR}: ${word(runs)})`,
      );
      met &&= total && runs;
      if (e.storm) {
        const storm = e.storm.told === e.storm.runs && e.storm.told_s !== null && e.storm.told_s <= TARGET_STORM_S;
        parts.push(`the storm ${stormText(e)} (all within ${TARGET_STORM_S} s: ${word(storm)})`);
        met &&= storm;
      }
    }
    lines.push(
      `Targets on the defaults (${e.apps.toLocaleString('en')} apps, service at ${e.service_rps} requests/s, simulated clock): ${parts.join('; ')}.`,
    );
  }
  return { text: lines.join('\n'), met };
}

/** The storm's figure in words. */
function stormText(e: EconomyResult): string {
  if (!e.storm) return '-';
  const { told, runs, told_s } = e.storm;
  return told_s === null ? `none of ${runs} in 15 min` : `${told} of ${runs} by ${round(told_s)} s`;
}
const markdown = `${table.join('\n')}\n`;
process.stderr.write(`\n${markdown}`);
if (values.markdown) fs.writeFileSync(values.markdown, markdown);
