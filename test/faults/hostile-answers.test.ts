/**
 * `check` as a child process, on the daemon's memory settings, against a service whose answers
 * are hostile: a 500 MB answer, an endless one, one dense with tiny values, lists that never end,
 * the token echoed into records. Each time `check` returns, says which source failed and why,
 * keeps its peak RSS (read from the child's /proc, not timed) well under 256 MB, and writes the
 * token nowhere: not in its output, not in the state file.
 *
 * The child runs through tsx (the suite does not build), which costs some 30 MB more than the
 * built daemon: the bound holds with that to spare. Measured with the build: docs/benchmarks.md.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAEMON_ENV, DAEMON_NODE_OPTIONS } from '../../src/cli/memory-settings.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import type { FaultSpec, FaultTarget } from '../../packages/simulator/src/fault-injector.js';
import { binArgs } from '../helpers/test-build.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TOKEN = 'hostile-test-token-5f0c2b7e91';
const MB = 1024 * 1024;

let sim: RunningSimulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 200, seed: 9, adminToken: TOKEN });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-hostile-'));
  fs.writeFileSync(
    path.join(dir, 'config.yaml'),
    [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      '  requests_per_second: "off"',
      'state: { path: ./state.db }',
      // A failed source alerts at once, so what an error says reaches a channel in one check.
      'checks: { sources: { failure_threshold: 1 } }',
      'notify:',
      '  channels: [{ name: console, type: log }]',
      'log: { level: warn }',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Peak resident set (VmHWM) of a process in bytes, or 0 once it is gone. */
function peakRss(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** Runs `check` once as a child, as the daemon runs (node options and environment), watching its peak RSS. */
async function checkOnce(
  configFile = path.join(dir, 'config.yaml'),
): Promise<{ code: number | null; output: string; peak: number }> {
  for (const f of fs.readdirSync(dir)) if (f.startsWith('state.db')) fs.rmSync(path.join(dir, f));
  const child = spawn(process.execPath, binArgs(['check', '--config', configFile], DAEMON_NODE_OPTIONS), {
    cwd: ROOT,
    env: { ...process.env, ...DAEMON_ENV, DMS_API_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, peakRss(child.pid!))), 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearInterval(poll);
  return { code, output, peak };
}

describe('check against hostile answers', () => {
  it.each<[string, FaultTarget, FaultSpec, RegExp]>([
    [
      'a 500 MB answer',
      'apps.list',
      { hugeMb: 500 },
      // The runs were read before the apps' labels: cut by the bound, what they said may fire.
      /^runs\s+partial: apps\.list: answer too large \(HTTP 200\): more than 8 MiB \(api\.max_answer_size\); from what it read: /m,
    ],
    [
      'an endless answer',
      'runs.list',
      { endless: true },
      /^runs\s+failed: runs\.list: answer too large \(HTTP 200\): more than 8 MiB/m,
    ],
    [
      '7.5 MB of tiny JSON values (under the size cap)',
      'urls.list',
      { hugeMb: 7.5, hugeDense: true },
      /^urls\s+failed: urls\.list: answer too large \(HTTP 200\): more than 250000 JSON values \(api\.max_answer_values\)$/m,
    ],
    [
      'lists of a billion items with fresh ids on every page',
      '*',
      { endlessList: true },
      /^urls\s+failed: urls\.list: list too long: total says 1000000000, more than 200000; raise api\.max_list_items/m,
    ],
    [
      'the token echoed into every answer',
      '*',
      { echoToken: true },
      /^servers\s+failed: whoami: answer does not fit the schema \(HTTP 200\): namespaces\[0\]\(id <secret>\)\.id/m,
    ],
  ])(
    '%s: check returns 1, names why, stays well under 256 MB, and writes the token nowhere',
    async (_what, target, fault, reason) => {
      sim.control.clearFaults();
      sim.control.setFault(target, fault);
      const { code, output, peak } = await checkOnce();
      expect(code, output).toBe(1);
      expect(output).toMatch(reason);
      expect(peak).toBeGreaterThan(0);
      expect(peak, `peak RSS ${Math.round(peak / MB)} MB`).toBeLessThan(256 * MB);
      expect(output).toMatch(/"channel":"console"[^\n]*"fingerprint":"watchdog\/source\//);
      expect(output).not.toContain(TOKEN);
      for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('state.db'))) {
        expect(fs.readFileSync(path.join(dir, f)).includes(TOKEN), f).toBe(false);
      }
      expect(sim.control.stats().streams).toBe(0);
    },
  );

  it('many large answers at once (every apps.get just under the 8 MiB cap, read four at a time): read one after another, well under 256 MB', async () => {
    const few = await startSimulator({ apps: 16, seed: 9, adminToken: TOKEN });
    const file = path.join(dir, 'few.yaml');
    fs.writeFileSync(file, fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8').replace(sim.baseUrl, few.baseUrl));
    try {
      few.control.setFault('apps.get', { hugeMb: 7.9 });
      const { code, output, peak } = await checkOnce(file);
      expect(code, output).toBe(0);
      expect(output).toMatch(/^maintenance\s+ok:/m);
      expect(peak, `peak RSS ${Math.round(peak / MB)} MB`).toBeLessThan(256 * MB);
    } finally {
      await few.close();
    }
  });
});
