/**
 * `npm run soak`: thousands of cycles against a churning simulator with time accelerated.
 *
 *   npm run soak                                  # 8640 cycles (6 simulated days), 100 apps
 *   npm run soak -- --cycles 6000 --apps 500
 *
 * The simulator runs in a child process (its memory is not ours); the watchdog runs here, with the
 * daemon's heap settings (`src/cli/memory-settings.ts`), on a ManualClock kept equal to the
 * simulator's time. Each cycle is one simulated minute: the
 * simulator churns and advances, the jobs due at that minute run (runs every minute, attention
 * every 5, maintenance every 30, urls every 15, backups every 60, as the default schedules), the
 * outbox is delivered, and once a simulated day retention prunes, as the daemon's daily job does.
 *
 * Checks, printed as PASS/FAIL (exit 1 on any FAIL):
 * - RSS stays flat: after warm-up, no sample (taken after a full GC) is more than 10% above the
 *   warm-up level;
 * - the SQLite file stays bounded by retention (1d here): its size right after each daily prune
 *   reaches a plateau (the last three within 10%);
 * - no handle or timer leaks: `process.getActiveResourcesInfo()` counts at the end equal those after
 *   warm-up;
 * - the open alerts match what the simulator says is wrong (`control.problems()`), per kind.
 * Samples go to standard error; one JSON summary line to standard output.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { silentLogger } from '../src/lib/logger.js';
import { Watchdog } from '../src/app/watchdog.js';
import { applyHeapGrowth } from '../src/cli/memory-settings.js';
import type { SnapshotJob } from '../src/collectors/snapshot.js';
import { parseConfig } from '../src/config/load-config.js';
import { ManualClock } from '../test/helpers/manual-clock.js';
import type { SimProblem } from '../packages/simulator/src/problem-finder.js';
import { pruneState } from '../src/state/retention.js';
import { round, rssMb } from './lib/measure.js';
import { spawnSimChild } from './lib/sim-child.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '8640' },
    apps: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    /** Share of apps changed per simulated minute. */
    churn: { type: 'string', default: '0.005' },
    'sample-every': { type: 'string', default: '100' },
  },
});
const cycles = Number(values.cycles);
const apps = Number(values.apps);
const churnFraction = Number(values.churn);
const sampleEvery = Number(values['sample-every']);
/** Cycles before the baseline is taken: the first retention run, JIT and caches settled. */
const warmup = Math.min(Math.floor(cycles / 4), 1_500);

// A full GC before each sample, so RSS compares live memory rather than garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Minutes between runs of each job: the default cron schedules. */
const EVERY: Record<SnapshotJob, number> = {
  runs: 1,
  attention: 5,
  urls: 15,
  maintenance: 30,
  backups: 60,
  servers: 5,
  installers: 5,
};

const sim = await spawnSimChild({ apps, seed: Number(values.seed) });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-soak-'));
const statePath = path.join(dir, 'state.db');
const clock = new ManualClock(await sim.control<number>('now'));
const config = parseConfig(
  `
api:
  base_url: ${sim.baseUrl}
  token: \${SOAK_TOKEN}
  requests_per_second: 1000
  page_size: 500
  max_retries: 0
state:
  path: ${statePath}
  retention: 1d
jobs: { jitter: 0s }
checks:
  # A day of look-back keeps each cycle's run details bounded while failures pile up in a world
  # nobody repairs; older failures age out (the final comparison names them).
  failed_runs: { lookback: 1d }
  # The simulator counts development backups as stale after 30 days; the default is off.
  backups: { max_age: { development: 30d } }
alerts:
  repeat_interval: 4h
notify:
  channels: [{ name: console, type: log }]
  routes: [{ channels: [console] }]
server:
  listen: "off"
`,
  { SOAK_TOKEN: sim.adminToken },
  'soak.yaml',
);
// The heap as the daemon runs it: `npm run soak` starts node with DAEMON_NODE_OPTIONS, and the
// old-generation growth is set here as `bin.ts` sets it.
applyHeapGrowth();
const wd = Watchdog.open({ config, clock, logger: silentLogger });

interface Sample {
  cycle: number;
  rss_mb: number;
  heap_mb: number;
  db_kb: number;
  open_alerts: number;
  resources: Record<string, number>;
  cycle_ms: number;
}

function dbBytes(): number {
  let n = 0;
  for (const suffix of ['', '-wal']) {
    try {
      n += fs.statSync(statePath + suffix).size;
    } catch {
      // no WAL right now
    }
  }
  return n;
}

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

function openAlerts(): { fingerprint: string; check: string }[] {
  return wd.store.db.prepare(`SELECT fingerprint, check_name AS "check" FROM alerts WHERE status = 'firing'`).all() as {
    fingerprint: string;
    check: string;
  }[];
}

const samples: Sample[] = [];
let failedCycles = 0;
/**
 * The state file's size right after each daily prune (WAL checkpointed and truncated, free pages
 * given back): what retention keeps. Before a prune the WAL dominates (it grows to its checkpoint
 * size between prunes), which says nothing about retention.
 */
const afterPrune: { cycle: number; kb: number }[] = [];
let lastPruneDay = Math.floor(clock.now() / DAY);
const started = Date.now();
let cycleMs = 0;

for (let cycle = 1; cycle <= cycles; cycle++) {
  if (churnFraction > 0) await sim.control('churn', churnFraction);
  clock.set(await sim.control<number>('advance', MINUTE));
  const due = wd.jobs.filter((job) => cycle % (EVERY[job] ?? 1) === 0 || cycle === 1);
  const t0 = performance.now();
  const report = await wd.runOnce(due);
  cycleMs += performance.now() - t0;
  if (!report.complete) failedCycles += 1;
  await wd.deliverDue();
  const day = Math.floor(clock.now() / DAY);
  if (day !== lastPruneDay) {
    lastPruneDay = day;
    const before = Math.round(dbBytes() / 1024);
    const pruned = pruneState(wd.store, { now: clock.now(), retentionMs: config.state.retention });
    afterPrune.push({ cycle, kb: Math.round(dbBytes() / 1024) });
    process.stderr.write(
      `${JSON.stringify({ cycle, prune: pruned.deleted, freed_pages: pruned.freedPages, db_kb_before: before, db_kb_after: afterPrune.at(-1)!.kb, open_alerts: openAlerts().length })}\n`,
    );
  }
  if (cycle % sampleEvery === 0 || cycle === warmup) {
    gc();
    const s: Sample = {
      cycle,
      rss_mb: round(rssMb()),
      heap_mb: round(process.memoryUsage().heapUsed / 1_048_576),
      db_kb: Math.round(dbBytes() / 1024),
      open_alerts: openAlerts().length,
      resources: resources(),
      cycle_ms: round(cycleMs / sampleEvery, 1),
    };
    cycleMs = 0;
    samples.push(s);
    process.stderr.write(`${JSON.stringify(s)}\n`);
  }
}

// ---- checks ----------------------------------------------------------------------------------
const results: { check: string; pass: boolean; detail: string }[] = [];
const base = samples.find((s) => s.cycle >= warmup)!;
const after = samples.filter((s) => s.cycle > warmup);
const maxRss = Math.max(...after.map((s) => s.rss_mb));
results.push({
  check: 'rss flat after warm-up (within 10%)',
  pass: maxRss <= base.rss_mb * 1.1,
  detail: `warm-up ${base.rss_mb} MB at cycle ${base.cycle}; highest after ${maxRss} MB; last ${samples.at(-1)!.rss_mb} MB`,
});

const lastQuarter = samples.filter((s) => s.cycle > cycles * 0.75);
// The first prunes find little a day old, and the open alerts (never pruned) grow while the
// churning world settles; after that, a day of history is what retention keeps: the last three
// sizes must be a plateau, none more than 10% above the smallest of them.
const kept = afterPrune.slice(-3);
const plateau = kept.length === 3 && Math.max(...kept.map((t) => t.kb)) <= Math.min(...kept.map((t) => t.kb)) * 1.1;
results.push({
  check: 'state file bounded by retention (the last three sizes after a daily prune within 10%)',
  pass: afterPrune.length >= 4 && plateau,
  detail: `after each prune: ${JSON.stringify(afterPrune.map((t) => t.kb))} kB${afterPrune.length < 4 ? ' (run at least 5 simulated days: --cycles 7200 or more)' : ''}`,
});

// Sockets and immediates come and go with requests in flight: a leak is a count that keeps
// growing, so the last quarter's highest must not exceed the highest seen early after warm-up.
const highest = (list: Sample[]) => {
  const out: Record<string, number> = {};
  for (const s of list) for (const [k, v] of Object.entries(s.resources)) out[k] = Math.max(out[k] ?? 0, v);
  return out;
};
const early = highest(samples.filter((s) => s.cycle >= warmup && s.cycle <= Math.max(warmup, cycles / 2)));
const late = highest(lastQuarter);
const leaks = Object.keys(late).filter((k) => (late[k] ?? 0) > (early[k] ?? 0));
results.push({
  check: 'no handle or timer leaks',
  pass: leaks.length === 0,
  detail: `highest after warm-up ${JSON.stringify(early)}; highest in the last quarter ${JSON.stringify(late)}; at the end ${JSON.stringify(resources())}`,
});

// The final state: every job once more at the same moment, then compare with the simulator.
clock.set(await sim.control<number>('advance', MINUTE));
const final = await wd.runOnce();
const problems = await sim.control<SimProblem[]>('problems');
const open = openAlerts();
const openBy = (prefix: string) =>
  new Set(open.filter((a) => a.fingerprint.startsWith(prefix)).map((a) => a.fingerprint));
const comparisons: { kind: string; expected: Set<string>; actual: Set<string> }[] = [
  {
    kind: 'failed runs',
    expected: new Set(problems.filter((p) => p.kind === 'failed_run').map((p) => `failed_runs/run/${p.id}`)),
    actual: openBy('failed_runs/'),
  },
  {
    kind: 'certificates',
    expected: new Set(
      problems
        .filter((p) => p.kind === 'certificate_expired' || p.kind === 'certificate_expiring')
        .map((p) => `certificates/url/${p.id}`),
    ),
    actual: openBy('certificates/'),
  },
  {
    kind: 'outside checks',
    expected: new Set(problems.filter((p) => p.kind === 'public_check_failed').map((p) => `url_checks/url/${p.id}`)),
    actual: openBy('url_checks/'),
  },
  {
    kind: 'backups (apps with any backup problem)',
    expected: new Set(
      problems
        .filter((p) => ['backup_critical', 'backup_stale', 'backup_unverified', 'offsite_failed'].includes(p.kind))
        .map((p) => `app ${p.appId}`),
    ),
    actual: new Set([...openBy('backups/')].map((f) => `app ${f.split('/')[2]} (${f.split('/').slice(3).join('/')})`)),
  },
  {
    kind: 'maintenance',
    expected: new Set(problems.filter((p) => p.kind === 'maintenance').map((p) => `maintenance/app/${p.id}`)),
    actual: openBy('maintenance/'),
  },
];
/** What the explanations read of a URL. */
interface UrlSeen {
  id: number;
  ssl_status: string;
  public_checked_at: string | null;
}
let urlRecords: Map<number, UrlSeen> | undefined;

/**
 * Differences the two sides are meant to have, each with its reason: a failed run older than the
 * look-back (the watchdog reads runs of the last `lookback` only; the simulator lists the newest
 * run of every action, however old), an app that never had a backup (the watchdog reports it
 * as stale; the simulator has no such kind), and a URL the service never judged (its certificate
 * unknown, no outside check: alerted once that has lasted; the simulator has no such kind).
 */
async function explained(kind: string, fingerprintOrKey: string): Promise<string | null> {
  const headers = { authorization: `Bearer ${sim.adminToken}` };
  const get = async (p: string) =>
    ((await (await fetch(`${sim.baseUrl}/api/v1${p}`, { headers })).json()) as { data: Record<string, unknown> }).data;
  if (kind === 'failed runs') {
    const run = await get(`/runs/${fingerprintOrKey.split('/')[2]}`);
    const created = Date.parse(String(run.created_at));
    if (created < clock.now() - config.checks.failed_runs.lookback) return 'created before the look-back';
  }
  if (kind === 'certificates' || kind === 'outside checks') {
    // A URL the service never judged (a pending URL of an app not deployed): its certificate stays
    // `unknown` and no outside check runs. The checks alert that, by design, once it has lasted
    // `unknown_after` and `max_check_age` (the check is blind to it meanwhile); the simulator
    // counts no such problem.
    urlRecords ??= new Map(((await get('/urls?limit=1000')).items as UrlSeen[]).map((u) => [u.id, u] as const));
    const url = urlRecords.get(Number(fingerprintOrKey.split('/')[2]));
    if (kind === 'certificates' && url?.ssl_status === 'unknown') return 'certificate status unknown to the service';
    if (kind === 'outside checks' && fingerprintOrKey.endsWith('/unchecked') && url?.public_checked_at === null)
      return 'never checked from outside';
  }
  if (kind.startsWith('backups')) {
    const app = await get(`/apps/${fingerprintOrKey.split(' ')[1]}`);
    if (app.last_backup_at === null) return `never backed up (app ${String(app.state)})`;
  }
  return null;
}

for (const c of comparisons) {
  // Compared on what comes before any " (detail)": the backups detail names the sub-problem.
  const key = (x: string) => x.replace(/ \(.*\)$/, '');
  const actualKeys = new Set([...c.actual].map(key));
  const expectedKeys = new Set([...c.expected].map(key));
  const reasons: string[] = [];
  const unexplained = async (list: string[]) => {
    const out: string[] = [];
    for (const x of list) {
      const why = await explained(c.kind, x);
      if (why === null) out.push(x);
      else reasons.push(`${x}: ${why}`);
    }
    return out;
  };
  const missing = await unexplained([...c.expected].filter((x) => !actualKeys.has(key(x))));
  const extra = await unexplained([...c.actual].filter((x) => !expectedKeys.has(key(x))));
  results.push({
    check: `open alerts match the simulator: ${c.kind}`,
    pass: missing.length === 0 && extra.length === 0,
    detail:
      `simulator ${expectedKeys.size}, open ${actualKeys.size}; not alerted ${JSON.stringify(missing.slice(0, 5))}; alerted but not wrong ${JSON.stringify(extra.slice(0, 5))}` +
      (reasons.length > 0
        ? `; explained: ${reasons.slice(0, 5).join('; ')}${reasons.length > 5 ? ` (+${reasons.length - 5})` : ''}`
        : ''),
  });
}
results.push({
  check: 'every job read its source in the final cycle',
  pass: final.complete,
  detail: JSON.stringify(final.jobs.map((j) => [j.job, j.outcome])),
});

for (const r of results) process.stderr.write(`${r.pass ? 'PASS' : 'FAIL'}  ${r.check}: ${r.detail}\n`);
const summary = {
  cycles,
  apps,
  wall_s: round((Date.now() - started) / 1000),
  simulated_days: round((cycles * MINUTE) / DAY, 1),
  failed_cycles: failedCycles,
  rss_warmup_mb: base.rss_mb,
  rss_max_after_warmup_mb: maxRss,
  rss_end_mb: samples.at(-1)!.rss_mb,
  db_kb_after_each_prune: afterPrune.map((t) => t.kb),
  open_alerts: open.length,
  pass: results.every((r) => r.pass),
  failures: results.filter((r) => !r.pass).map((r) => r.check),
};
process.stdout.write(`${JSON.stringify(summary)}\n`);

await wd.stop(1_000);
await sim.close();
fs.rmSync(dir, { recursive: true, force: true });
process.exitCode = summary.pass ? 0 : 1;
