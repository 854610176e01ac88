/**
 * `deploy-watchdog run` as a real child process against the simulator: it starts and answers
 * /healthz and /readyz, keeps running through a SIGHUP with an invalid file, and on SIGTERM exits 0
 * with the database closed and checkpointed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let sim: RunningSimulator;
let dir: string;
let child: ChildProcess | undefined;
let stdout = '';

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 5 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-run-'));
});
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A port free right now (the daemon's config needs a fixed one). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls until `check` holds, in small steps, failing after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; daemon output:\n${stdout}`);
}

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}

describe('run', () => {
  it('serves health, refuses a bad reload, applies a good one, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const configFile = path.join(dir, 'watchdog.yaml');
    const good = [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      '  requests_per_second: 200',
      'state: { path: ./state.db }',
      'jobs: { runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
      'notify:',
      '  channels: [{ name: console, type: log }]',
      '  routes: [{ channels: [console] }]',
      `server: { listen: "127.0.0.1:${port}" }`,
      'log: { level: info, format: json }',
      '',
    ].join('\n');
    fs.writeFileSync(configFile, good);
    child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/bin.ts'), 'run', '--config', configFile, '--stop-timeout', '5s'], {
      cwd: ROOT,
      env: { ...process.env, DMS_API_TOKEN: sim.adminToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));

    const base = `http://127.0.0.1:${port}`;
    await until('/healthz', async () => (await status(`${base}/healthz`)) === 200);
    await until('/readyz', async () => (await status(`${base}/readyz`)) === 200);
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/deploy_watchdog_cycles_total\{job="runs",outcome="ok"\}/);

    fs.writeFileSync(configFile, good.replace('requests_per_second: 200', 'requests_per_second: fast'));
    child.kill('SIGHUP');
    await until('the reload to be refused', () => stdout.includes('configuration refused'));
    const problem = stdout.split('\n').find((l) => l.includes('"configuration problem"'))!;
    expect(JSON.parse(problem)).toMatchObject({ level: 50, key: 'api.requests_per_second' });
    expect(await status(`${base}/healthz`)).toBe(200);

    // A valid file is applied: the runtime is rebuilt, the listener stays, cycles run again.
    fs.writeFileSync(configFile, good.replace('requests_per_second: 200', 'requests_per_second: 100'));
    child.kill('SIGHUP');
    await until('the reload', () => stdout.includes('configuration reloaded'));
    await until('/readyz after the reload', async () => (await status(`${base}/readyz`)) === 200);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('deploy-watchdog stopped');
    expect(stdout).not.toContain(sim.adminToken);

    // Closed: no WAL left behind to replay, and another connection can take the write lock at once.
    const wal = path.join(dir, 'state.db-wal');
    expect(!fs.existsSync(wal) || fs.statSync(wal).size === 0).toBe(true);
    const db = new Database(path.join(dir, 'state.db'), { timeout: 0 });
    try {
      db.exec('BEGIN IMMEDIATE; COMMIT;');
      const runs = db.prepare(`SELECT consecutive_failures AS f, last_success_at AS s FROM source_health WHERE job = 'runs'`).get() as { f: number; s: number };
      expect(runs.f).toBe(0);
      expect(runs.s).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
