/**
 * Peak RSS of `check` against each hostile answer of issue 25: the real CLI in a child process, on
 * the daemon's memory settings (`DAEMON_NODE_OPTIONS`, `DAEMON_ENV`), reading the simulator in
 * another child, one fault at a time, a fresh state each time. The peak is the kernel's high-water
 * mark (`VmHWM` in /proc/PID/status), read every 20 ms until the child exits, so nothing of this
 * process or the simulator's is counted.
 *
 *   npx tsx bench/hostile-rss.ts            # check through tsx, from the sources
 *   npm run build && npx tsx bench/hostile-rss.ts --built   # dist/cli/bin.js, as shipped
 *   npx tsx bench/hostile-rss.ts --only attention   # the cases whose name contains a word
 *   npx tsx bench/hostile-rss.ts --channels 3       # every alert told on three log channels
 *
 * Prints one JSON line per case and a Markdown table for docs/benchmarks.md. Goals (issue 25):
 * under 256 MB for any answer within `api.max_answer_size`, and under 200 MB for a 7 MB field. A
 * missed goal, the token seen anywhere, or `check` killed, exits 1.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DAEMON_ENV, DAEMON_NODE_OPTIONS } from '../src/cli/memory-settings.js';
import type { FaultSpec, FaultTarget } from '../packages/simulator/src/fault-injector.js';
import { procStatusKb } from './lib/measure.js';
import { spawnSimChild } from './lib/sim-child.js';

const MB = 1024 * 1024;
const ROOT = path.resolve(import.meta.dirname, '..');

/** One hostile answer: where the fault goes, what it is, and the goal its peak is held to (MB). */
interface HostileCase {
  name: string;
  target: FaultTarget;
  fault: FaultSpec;
  goalMb: number;
}

/** Markup and a mention at the start of each long text, so escaping is exercised too. */
const HEAD = '<!channel> <script>alert(1)</script> ';

/** A field of `mb` MB, built by the simulator (the control interface takes 1 MB). */
function longText(field: string, mb: number): FaultSpec {
  return { recordField: { field, value: `${HEAD}${'r'.repeat(1024 - HEAD.length)}`, repeat: Math.round(mb * 1024) } };
}

const CASES: readonly HostileCase[] = [
  { name: '2 MB step reason in runs.get', target: 'runs.get', fault: longText('steps.0.reason', 2), goalMb: 200 },
  { name: '7 MB step reason in runs.get', target: 'runs.get', fault: longText('steps.0.reason', 7), goalMb: 200 },
  {
    name: '7 MB attention reason',
    target: 'attention.list',
    fault: longText('sections.0.items.0.reason', 7),
    goalMb: 200,
  },
  {
    name: 'attention item with 126,000 fields',
    target: 'attention.list',
    fault: {
      recordField: {
        field: 'sections.0.items.0',
        value: { id: 424242, name: 'wide-app', reason: 'many fields' },
        fields: 126_000,
      },
    },
    goalMb: 256,
  },
  { name: 'a new error code every answer', target: '*', fault: { inventedErrorCodes: true }, goalMb: 256 },
  {
    name: 'the token echoed, \\u-escaped, as a key',
    target: '*',
    fault: { echoToken: true, echoEscaped: true, echoText: 'https://hooks.example.com/services/T0/B0/secret' },
    goalMb: 256,
  },
  { name: 'an endless list', target: '*', fault: { endlessList: true }, goalMb: 256 },
  { name: 'an endless body', target: 'runs.list', fault: { endless: true }, goalMb: 256 },
  { name: 'a 7.9 MB body (at max_answer_size)', target: 'apps.get', fault: { hugeMb: 7.9 }, goalMb: 256 },
  { name: 'a 500 MB body', target: 'apps.list', fault: { hugeMb: 500 }, goalMb: 256 },
];

const { values } = parseArgs({
  options: {
    built: { type: 'boolean', default: false },
    only: { type: 'string' },
    apps: { type: 'string', default: '200' },
    /** Log channels every alert goes to: what is kept per channel shows with more than one. */
    channels: { type: 'string', default: '1' },
  },
});

/** The kernel's high-water mark of a process's RSS, in bytes; 0 once it is gone. */
function peakRss(pid: number): number {
  return (procStatusKb(pid, 'VmHWM') ?? 0) * 1024;
}

/** Runs `check` once; its exit code, what it wrote, its peak RSS and how long it took. */
async function check(
  dir: string,
  token: string,
): Promise<{ code: number | null; signal: string | null; output: string; peak: number; ms: number }> {
  for (const f of fs.readdirSync(dir)) if (f.startsWith('state.db')) fs.rmSync(path.join(dir, f));
  const cli = values.built
    ? [path.join(ROOT, 'dist/cli/bin.js')]
    : ['--import', 'tsx', path.join(ROOT, 'src/cli/bin.ts')];
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [...DAEMON_NODE_OPTIONS, ...cli, 'check', '--config', path.join(dir, 'config.yaml')],
    { cwd: ROOT, env: { ...process.env, ...DAEMON_ENV, DMS_API_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, peakRss(child.pid!))), 20);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  clearInterval(poll);
  return { code, signal, output, peak, ms: Date.now() - started };
}

/** The bytes of the state files `check` left. */
function stateBytes(dir: string): number {
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('state.db'))
    .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

/** Whether the token is in the output or in any state file. */
function leaks(dir: string, output: string, token: string): boolean {
  if (output.includes(token)) return true;
  return fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('state.db'))
    .some((f) => fs.readFileSync(path.join(dir, f)).includes(token));
}

const sim = await spawnSimChild({ apps: Number(values.apps), seed: 9 });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-hostile-rss-'));
fs.writeFileSync(
  path.join(dir, 'config.yaml'),
  [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: "off"',
    'state: { path: ./state.db }',
    'checks: { sources: { failure_threshold: 1 } }',
    'notify:',
    `  channels: [${Array.from({ length: Number(values.channels) }, (_, i) => `{ name: console${i || ''}, type: log }`).join(', ')}]`,
    'log: { level: warn }',
    '',
  ].join('\n'),
);

const rows: string[] = [];
let failed = false;
try {
  const cases = [{ name: 'no fault (baseline)', target: '*' as const, fault: {}, goalMb: 256 }, ...CASES].filter(
    (c) => values.only === undefined || c.name.includes(values.only),
  );
  for (const c of cases) {
    await sim.control('clearFaults');
    if (Object.keys(c.fault).length > 0) await sim.control('setFault', c.target, c.fault);
    const run = await check(dir, sim.adminToken);
    const peakMb = Math.round((run.peak / MB) * 10) / 10;
    const leaked = leaks(dir, run.output, sim.adminToken);
    const killed = run.signal !== null || /heap out of memory/i.test(run.output);
    const met = peakMb > 0 && peakMb < c.goalMb && !leaked && !killed;
    failed ||= !met;
    const line = {
      case: c.name,
      runner: values.built ? 'built' : 'tsx',
      exit: run.code,
      signal: run.signal,
      peak_rss_mb: peakMb,
      goal_mb: c.goalMb,
      met,
      token_leaked: leaked,
      state_mb: Math.round((stateBytes(dir) / MB) * 10) / 10,
      seconds: Math.round(run.ms / 100) / 10,
    };
    console.log(JSON.stringify(line));
    rows.push(
      `| ${c.name} | ${line.exit ?? line.signal} | ${peakMb} | < ${c.goalMb} ${met ? 'met' : '**missed**'} | ${line.state_mb} | ${line.seconds} |`,
    );
  }
} finally {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(
  [
    '',
    `| case (${values.built ? 'built' : 'tsx'}) | exit | peak RSS (MB) | goal (MB) | state (MB) | time (s) |`,
    '|---|---:|---:|---|---:|---:|',
    ...rows,
  ].join('\n'),
);
process.exitCode = failed ? 1 : 0;
