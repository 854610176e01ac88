/**
 * The daemon left on its defaults against a service that follows the reference but differs from
 * our simulator's defaults wherever the reference is silent: a maximum `limit` of 50, timestamps
 * written with offsets, a space and microseconds, and a real rate limit below the daemon's own that
 * answers 429 without Retry-After. One `check` against it finds exactly what the same estate shows
 * on the simulator's defaults.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../packages/simulator/src/index.js';
import { runCli, writeConfig } from '../helpers/cli-harness.js';

const SEED = 21;
let dir: string;
const sims: RunningSimulator[] = [];

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-other-service-'));
});
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One `check` on the defaults (but for the maintenance job, whose minutes of reads this estate does not need) against a simulator in `modes`. */
async function checkAgainst(
  name: string,
  modes: SimulatorOptions,
  extra: string[] = [],
  token?: string,
): Promise<{ code: number; stdout: string; stderr: string; alerts: { fingerprint: string; severity: string }[] }> {
  const sim = await startSimulator({ apps: 60, seed: SEED, ...modes });
  sims.push(sim);
  const file = writeConfig(
    dir,
    [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      `state: { path: ./${name}.db }`,
      'jobs: { maintenance: "off", jitter: 0s }',
      'notify:',
      '  channels: [{ name: console, type: log }]',
      'log: { level: warn }',
      ...extra,
    ],
    `${name}.yaml`,
  );
  const env = { DMS_API_TOKEN: token ?? sim.adminToken };
  const checked = await runCli(['check', '--config', file], { env });
  const listed = await runCli(['alerts', '--config', file, '--json'], { env });
  const alerts = (JSON.parse(listed.stdout) as { fingerprint: string; severity: string }[]).map((a) => ({
    fingerprint: a.fingerprint,
    severity: a.severity,
  }));
  return { ...checked, alerts: alerts.sort((a, b) => a.fingerprint.localeCompare(b.fingerprint)) };
}

// Each test runs `check` as a child process against one or two simulators, one of them rate
// limited: 15 s on a quiet machine, past 30 s on a loaded one. A generous bound, not a budget.
describe('a service that differs wherever the reference is silent', { timeout: 120_000 }, () => {
  it('is read completely on the defaults, with the same findings as the simulator on its own', async () => {
    const ours = await checkAgainst('ours', {});
    expect(ours.code, ours.stdout + ours.stderr).toBe(0);
    expect(ours.alerts.length).toBeGreaterThan(5);
    // The default lists name every word the simulator speaks.
    expect(ours.stdout).not.toMatch(/no checks\.\* list names/);
    expect(ours.stderr).not.toMatch(/which no list of checks\.\* names/);

    const theirs = await checkAgainst('theirs', {
      maxLimit: 50,
      timeFormat: 'mixed',
      rateLimit: { rps: 6, burst: 6, retryAfter: 'none' },
    });
    expect(theirs.code, theirs.stdout + theirs.stderr).toBe(0);
    expect(theirs.stdout).toMatch(/6 of 6 jobs complete/);
    expect(theirs.alerts).toEqual(ours.alerts);
    // What it learned, said once each with what to set.
    expect(theirs.stderr).toMatch(/its lists are read 50 at a time\. Set api\.page_size: 50/);
    expect(theirs.stderr).toMatch(/429 without Retry-After.*set api\.requests_per_second/);
  });

  it('with other state words, is read the same once checks.* names them', async () => {
    const ours = await checkAgainst('ours-words', {});
    const words = [
      'checks:',
      '  failed_runs: { failed_states: [failed], succeeded_states: [succeeded] }',
      '  stuck_runs: { active_states: [pending, in_progress] }',
      '  backups: { succeeded_states: [success], running_states: [in_progress], failed_states: [error], offsite_failed_states: [error] }',
      '  servers: { bad_states: [failed, down, "off"] }',
      '  app_state: { bad_states: [failed, inactive] }',
      '  upgrades: { failed_states: [error], standby_states: [on_hold], other_states: [open, in_test, finished] }',
      '  installers: { bad_states: [failed], other_states: [active, inactive] }',
    ];
    const theirs = await checkAgainst('theirs-words', { stateWords: 'alt' }, words);
    expect(theirs.code, theirs.stdout + theirs.stderr).toBe(0);
    expect(theirs.alerts).toEqual(ours.alerts);
    // Words known but in no "other" list yet (up, active, canceled…) are said, and nothing else changes.
    expect(theirs.stdout).toMatch(/server states no checks\.\* list names: "up" ×\d+/);
    const quiet = [
      ...words,
      '  failed_runs: { failed_states: [failed], succeeded_states: [succeeded], other_states: [canceled] }',
      '  servers: { bad_states: [failed, down, "off"], other_states: [up, building] }',
      '  app_state: { bad_states: [failed, inactive], other_states: [active, provisioning] }',
    ].filter((line, i, all) => !all.slice(i + 1).some((later) => later.split(':')[0] === line.split(':')[0]));
    const named = await checkAgainst('theirs-words-named', { stateWords: 'alt' }, quiet);
    expect(named.code, named.stdout + named.stderr).toBe(0);
    expect(named.alerts).toEqual(ours.alerts);
    expect(named.stdout).not.toMatch(/no checks\.\* list names/);
    expect(named.stderr).not.toMatch(/which no list of checks\.\* names/);
  });

  it('with other state words and the defaults, says once per word which lists it could belong in', async () => {
    const theirs = await checkAgainst('theirs-words-defaults', { stateWords: 'alt' });
    // Every run the service calls "failed" would be judged by no check: said in check's summary…
    expect(theirs.stdout).toMatch(/runs +ok: .*run states no checks\.\* list names: .*"failed" ×\d+/);
    expect(theirs.stdout).toMatch(/servers +ok: .*server states no checks\.\* list names: .*"failed"/);
    expect(theirs.stdout).toMatch(/backups +ok: .*app states no checks\.\* list names: .*"active"/);
    // A backup "success" is no taken backup on the defaults: said beside the app states, not only in each alert.
    expect(theirs.stdout).toMatch(/backups +ok: .*; backup states no checks\.\* list names: "success" ×\d+/);
    const backupWord = theirs.stderr.split('\n').filter((l) => l.includes('backup state \\"success\\"'));
    expect(backupWord, theirs.stderr).toHaveLength(1);
    expect(backupWord[0]).toContain('checks.backups.succeeded_states: done');
    // …and once in the log, naming every list it could go in with what they hold now.
    const warnings = theirs.stderr.split('\n').filter((l) => l.includes('run state \\"failed\\"'));
    expect(warnings, theirs.stderr).toHaveLength(1);
    expect(warnings[0]).toContain('checks.failed_runs.failed_states: error');
    expect(warnings[0]).toContain('checks.stuck_runs.active_states: queued, running');
    expect(warnings[0]).toContain('checks.failed_runs.other_states: cancelled');
  });

  it('with a token that may read staging and development only, reads what it may, completely, and only that', async () => {
    const ours = await checkAgainst('ours-scoped', {});
    const scoped = 'scoped-read-token-5e2a';
    const theirs = await checkAgainst(
      'theirs-scoped',
      { tokens: [{ token: scoped, namespaces: '*', permissions: '*', readEnvironments: ['staging', 'development'] }] },
      [],
      scoped,
    );
    expect(theirs.code, theirs.stdout + theirs.stderr).toBe(0);
    expect(theirs.alerts.length).toBeGreaterThan(0);
    const listed = await runCli(['alerts', '--config', path.join(dir, 'theirs-scoped.yaml'), '--json'], { env: {} });
    const environments = new Set(
      (JSON.parse(listed.stdout) as { labels: Record<string, string> }[]).map((a) => a.labels.environment_type),
    );
    expect(environments.has('production')).toBe(false);
    // Every alert it raised is one the admin token's read raises too.
    const all = new Set(ours.alerts.map((a) => a.fingerprint));
    expect(theirs.alerts.filter((a) => !all.has(a.fingerprint))).toEqual([]);
  });

  it('with a total short by whole pages, fails the read of that list instead of reading part of it', async () => {
    const token = 'acme-only-token-7c1d';
    const sim = await startSimulator({
      apps: 60,
      seed: SEED,
      tokens: [{ token, namespaces: ['acme'], permissions: '*' }],
    });
    sims.push(sim);
    const answer = await fetch(`${sim.baseUrl}/api/v1/urls?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    const { total } = ((await answer.json()) as { data: { total: number } }).data;
    expect(total).toBeGreaterThan(20);
    // The service counts its URLs down to a whole number of pages: every page asked for comes full.
    sim.control.setFault('urls.list', { totalOff: -(total % 20 || 20) });
    const file = writeConfig(
      dir,
      ['api:', `  base_url: ${sim.baseUrl}`, `  token: ${token}`, '  page_size: 20', 'state: { path: ./short.db }'],
      'short.yaml',
    );
    const checked = await runCli(['check', '--config', file, '--job', 'urls'], { env: {} });
    expect(checked.code, checked.stdout + checked.stderr).toBe(1);
    expect(checked.stdout).toMatch(/urls +failed: urls\.list: .*count_mismatch: read \d+ items, total says \d+/);
  });
});
