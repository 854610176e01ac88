/**
 * `check` is the daemon's cycle, once, remediation included: with a policy on, one `check` sends
 * the retry the cycle planned (with its idempotency key) and prints what it did; `actions` then
 * shows it; the next `check` follows the started run to its outcome, and sends nothing twice.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { runCli, writeConfig, type CliResult } from '../helpers/cli-harness.js';

let sim: RunningSimulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 12, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-check-rem-'));
  sim.control.resetRequests();
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const REASON = 'check-e2e: health check timed out';

function config(remediation: { enabled: boolean; dryRun: boolean }): string {
  return writeConfig(dir, [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    'state: { path: ./state.db }',
    'jobs: { maintenance: "off", backups: "off", urls: "off", attention: "off" }',
    'notify:',
    '  channels: [{ name: console, type: log }]',
    '  routes: [{ channels: [console] }]',
    'log: { level: warn }',
    'remediation:',
    `  enabled: ${remediation.enabled}`,
    `  dry_run: ${remediation.dryRun}`,
    '  poll_interval: 1s',
    '  policies:',
    '    - { name: retry-staging, action: runs.retry, match: { environment_type: staging }, match_re: { reason: "check-e2e: .*" } }',
  ]);
}

async function run(...argv: string[]): Promise<CliResult> {
  const result = await runCli(argv, { env: { DMS_API_TOKEN: sim.adminToken } });
  expect(result.stdout + result.stderr).not.toContain(sim.adminToken);
  return result;
}

/** A staging app with no run under way, so the retry is the only change on it. */
function stagingApp(): number {
  const state = sim.control.state;
  const busy = new Set([...state.activeRuns].map((id) => state.runs.get(id)?.appId));
  const app = [...state.apps.values()].find(
    (a) => a.envType === 'staging' && !busy.has(a.id) && !a.upgrade && a.state === 'running',
  );
  if (!app) throw new Error('no free staging app');
  return app.id;
}

function retriesSent(): { key: string | undefined; status: number }[] {
  return sim.control
    .requests()
    .filter((r) => r.fn === 'runs.retry')
    .map((r) => ({ key: r.idempotencyKey, status: r.status }));
}

describe('check with remediation on', () => {
  it('sends the retry the cycle planned, prints it, and follows the run on the next check', async () => {
    const file = config({ enabled: true, dryRun: false });
    const failed = sim.control.addRun({
      appId: stagingApp(),
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: REASON,
    });

    const first = await run('check', '--config', file, '--job', 'runs');
    expect(first.code).toBe(0);
    const sent = retriesSent();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.status).toBe(200);
    expect(sent[0]!.key).toMatch(new RegExp(`^dw-.*run${failed.id}-a1$`));
    expect(first.stdout).toMatch(/^remediation: 1 change sent, 0 runs followed, 0 finished$/m);
    expect(first.stdout).toMatch(
      new RegExp(`^\\s+retry-staging\\s+runs\\.retry\\s+run #${failed.id}\\s+acted\\b`, 'm'),
    );
    expect(first.stdout).toMatch(
      new RegExp(
        `^\\s+retry-staging\\s+runs\\.retry\\s+run #${failed.id}\\s+answered\\s+started\\s+${sent[0]!.key}`,
        'm',
      ),
    );

    const actions = await run('actions', '--config', file);
    expect(actions.stdout).not.toContain('no remediation decisions recorded');
    expect(actions.stdout).toContain(sent[0]!.key);

    // The retried run finishes on the service; the next check (past the poll interval) follows it.
    sim.control.advance(60 * 60_000);
    await new Promise((r) => setTimeout(r, 1_100));
    const second = await run('check', '--config', file, '--job', 'runs');
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^remediation: 0 changes sent, 1 run followed, 1 finished$/m);
    expect(second.stdout).toMatch(/\boutcome\b/);
    expect(retriesSent()).toHaveLength(1);
  });

  it.each([
    [
      'dry run',
      { enabled: true, dryRun: true },
      /^remediation \(dry run: nothing is sent\): 0 changes sent/m,
      /\bdry_run\b/,
    ],
    [
      'disabled',
      { enabled: false, dryRun: false },
      /^remediation \(remediation\.enabled is false: nothing is sent\): 0 changes sent/m,
      /\bskipped\b.*disabled/,
    ],
  ])('says so and sends nothing when remediation is a %s', async (_what, settings, head, row) => {
    const file = config(settings);
    sim.control.addRun({
      appId: stagingApp(),
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: REASON,
    });
    const { code, stdout } = await run('check', '--config', file, '--job', 'runs');
    expect(code).toBe(0);
    expect(stdout).toMatch(head);
    expect(stdout).toMatch(row);
    expect(retriesSent()).toEqual([]);
  });
});
