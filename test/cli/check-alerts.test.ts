/** `check` exit codes and `alerts`, run in-process through `main` against the simulator. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { Store } from '../../src/state/store.js';
import { runCli, writeConfig as writeConfigFile, type CliResult } from '../helpers/cli-harness.js';
import { startFakeService } from '../helpers/fake-service.js';
import { apiGet } from '../helpers/simulator.js';

let sim: RunningSimulator;
let dir: string;
let configFile: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 12, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-check-'));
  configFile = writeConfig('config.yaml');
});
afterEach(() => {
  sim.control.clearFaults();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The simulator's config (one log channel, no maintenance job), with `extra` sections and `apiExtra` api keys. */
function writeConfig(name: string, extra = '', apiExtra = ''): string {
  return writeConfigFile(
    dir,
    [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      '  requests_per_second: 1000',
      '  max_retries: 0',
      apiExtra,
      'state: { path: ./state.db }',
      'jobs: { maintenance: "off" }',
      'notify:',
      '  channels: [{ name: console, type: log }]',
      '  routes: [{ channels: [console] }]',
      'log: { level: warn }',
      extra,
    ],
    name,
  );
}

/** Runs one command line, capturing both streams; the token is never printed. */
async function run(...argv: string[]): Promise<CliResult> {
  const result = await runCli(argv, { env: { DMS_API_TOKEN: sim.adminToken, USER: 'ops-bob' } });
  expect(result.stdout + result.stderr).not.toContain(sim.adminToken);
  return result;
}

/** `silence --match <matcher> --for 1h` with a reason, by ops-bob. */
function silenceFor(matcher: string): Promise<CliResult> {
  return run('silence', '--config', configFile, '--match', matcher, '--for', '1h', '--reason', 'planned');
}

describe('check', () => {
  it('exits 0 after one complete cycle of every enabled job, with one line per job', async () => {
    const { code, stdout } = await run('check', '--config', configFile);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^runs\s+ok: \d+ findings?, \d+ events?$/m);
    expect(stdout).toMatch(/^backups\s+ok:/m);
    // The seed leaves one server in error.
    expect(stdout).toMatch(/^servers\s+ok: 1 finding, 1 event$/m);
    expect(stdout).not.toMatch(/^maintenance/m);
    expect(stdout).toMatch(/6 of 6 jobs complete; \d+ events? written; \d+ notifications? sent/);
  });

  it('counts a notification a silence holds apart from those still waiting to be sent', async () => {
    // A first check makes the state the silence is kept in.
    expect((await run('check', '--config', configFile, '--job', 'installers')).code).toBe(0);
    const made = await silenceFor('check=servers');
    expect(made.code).toBe(0);
    const { code, stdout } = await run('check', '--config', configFile, '--job', 'servers');
    expect(code).toBe(0);
    // The seed's server in error: its alert fires, and the silence holds its notification.
    expect(stdout).toMatch(/^servers\s+ok: 1 finding, 1 event$/m);
    expect(stdout).toMatch(/0 notifications sent, 1 held back \(a silence, a mute window/);
    expect(stdout).not.toMatch(/still waiting/);
  });

  it('exits 1 when a source cannot be read completely, naming why', async () => {
    sim.control.setFault('urls.list', { errorCode: 'internal_error' });
    const { code, stdout } = await run('check', '--config', configFile, '--job', 'urls');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^urls\s+failed: urls\.list: internal_error \(HTTP 500\)/m);
  });

  it('exits 0 when every record is set aside, its last line counting them', async () => {
    // Every job completes, but a reader of the last line alone must not take it as all well.
    sim.control.setTimeFormat('zoneless');
    try {
      const { code, stdout } = await run('check', '--config', configFile);
      expect(code, stdout).toBe(0);
      expect(stdout).toMatch(/^runs\s+ok: .*; \d+ records? set aside, alerts held/m);
      expect(stdout).toMatch(
        /^6 of 6 jobs complete, \d+ records? set aside \(their alerts held\); \d+ events? written/m,
      );
    } finally {
      sim.control.setTimeFormat('iso');
    }
  });

  it('names a record set aside in the words of the watchdog alert, not the internal kind', async () => {
    sim.control.setFault('attention.list', { recordField: { field: 'sections.0.severity', value: 'critical' } });
    const { code, stdout } = await run('check', '--config', configFile, '--job', 'attention');
    expect(code, stdout).toBe(0);
    expect(stdout).toMatch(
      /^attention\s+ok: .*; 1 record set aside, alerts held \(e\.g\. attention section \(id unreadable\): /m,
    );
    expect(stdout).not.toContain('attention_section');
  });

  it("prints the service's own error message as text, not a terminal command", async () => {
    const hostile = 'maintenance\u001b]52;c;cm0gLXJmIH4K\u0007\u001b[2J\u009b31m\u202egnp';
    const service = await startFakeService(() => ({
      status: 500,
      body: { error: { code: 'internal_error', message: hostile } },
    }));
    try {
      const file = writeConfig('down.yaml');
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(sim.baseUrl, service.root));
      const { code, stdout } = await run('check', '--config', file, '--job', 'urls');
      expect(code).toBe(1);
      expect(stdout).toMatch(/^urls\s+failed: whoami: internal_error \(HTTP 500\): maintenance\\u\{1b\}\]52;c;/m);
      // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
      expect(stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    } finally {
      await service.close();
    }
  });

  it.each([
    [
      'no config file',
      () => ['check'],
      /no configuration file: give --config FILE, set \$DEPLOY_WATCHDOG_CONFIG, or create \/dev\/null\//,
    ],
    ['an unknown job', () => ['check', '--config', configFile, '--job', 'nightly'], /unknown job "nightly"/],
    [
      'an invalid config, naming the key',
      () => ['check', '--config', writeConfig('bad.yaml', 'alerts: { repeat_interval: soon }')],
      /alerts\.repeat_interval/,
    ],
  ])('exits 2 for %s', async (_what, argv, message) => {
    const { code, stderr } = await run(...argv());
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('exits 2 for a configured namespace the token does not reach, naming it', async () => {
    const file = writeConfig('ns.yaml', '', '  namespaces: [atlantis]');
    const { code, stdout } = await run('check', '--config', file, '--job', 'attention');
    expect(code).toBe(2);
    expect(stdout).toMatch(/^attention\s+failed: api\.namespaces: the token does not reach "atlantis"/m);
  });

  it('says what the token cannot read, as the daemon does at start: a check from cron hears it too', async () => {
    const token = 'token-without-production';
    const hidden = await startSimulator({
      apps: 6,
      seed: 3,
      tokens: [{ token, namespaces: '*', permissions: '*', readEnvironments: ['staging', 'development'] }],
    });
    try {
      fs.writeFileSync(configFile, fs.readFileSync(configFile, 'utf8').replace(sim.baseUrl, hidden.baseUrl));
      const { code, stderr } = await runCli(['check', '--config', configFile, '--job', 'servers'], {
        env: { DMS_API_TOKEN: token },
      });
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("this token lists no production app: if the estate has one, the token's role hides it");
    } finally {
      await hidden.close();
    }
  });
});

describe('alerts', () => {
  it('lists open alerts with since, severity, check, labels and the silence that mutes one', async () => {
    const failed = sim.control.addRun({ appId: 2, state: 'error', reason: 'disk full on /var/lib/docker' });
    expect((await run('check', '--config', configFile, '--job', 'runs')).code).toBe(0);
    const made = await silenceFor('check=failed_runs');
    const silenceId = made.stdout.trim();

    const table = await run('alerts', '--config', configFile);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID\s+SINCE\s+STATUS\s+SEVERITY\s+CHECK\s+SILENCE\s+SUMMARY\s+LABELS$/m);
    const line = table.stdout.split('\n').find((l) => l.includes('disk full'))!;
    expect(line).toMatch(/^[0-9a-f]{8}\s+\d{4}-\d\d-\d\dT\S+\s+firing\s+(warning|critical)\s+failed_runs\s+/);
    expect(line).toContain(silenceId);

    const json = await run('alerts', '--config', configFile, '--json');
    const rows = JSON.parse(json.stdout) as {
      fingerprint: string;
      silence: string | null;
      labels: Record<string, string>;
    }[];
    const row = rows.find((r) => r.fingerprint === `failed_runs/run/${failed.id}`)!;
    expect(row.silence).toBe(silenceId);
    expect(row.labels.check).toBe('failed_runs');
  });

  it('says why a pending alert waits: the hold its check asked for, not alerts.for', async () => {
    const staging = [...sim.control.state.apps.values()].find((a) => a.envType === 'staging')!;
    const failed = sim.control.addRun({ appId: staging.id, state: 'error', reason: 'pip failed' });
    expect((await run('check', '--config', configFile, '--job', 'attention')).code).toBe(0);
    const reason = `waiting up to 20m (checks.attention.fold_wait) for failed_runs to report run ${failed.id}`;

    const table = await run('alerts', '--config', configFile);
    expect(table.stdout).toMatch(
      new RegExp(
        `^[0-9a-f]{8} pending: held until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC: ${reason.replace(/[()]/g, '\\$&')}$`,
        'm',
      ),
    );
    expect(table.stdout).not.toContain('(alerts.for)');
    const json = JSON.parse((await run('alerts', '--config', configFile, '--json')).stdout) as {
      fingerprint: string;
      pending?: string[];
    }[];
    const row = json.find((r) => r.fingerprint === `attention/failed_run/failure/id/${failed.id}`)!;
    expect(row.pending).toEqual([expect.stringMatching(/^held until .+ UTC: waiting up to 20m/)]);
    sim.control.setRunState(failed.id, { state: 'done' });
  });

  it('says why a failed run the service retries by itself waits: its retry grace, not alerts.for', async () => {
    const staging = [...sim.control.state.apps.values()].find((a) => a.envType === 'staging')!;
    const retrying = sim.control.addRun({ appId: staging.id, state: 'error', failedStep: 'restart', retrying: true });
    expect((await run('check', '--config', configFile, '--job', 'runs')).code).toBe(0);
    const reason = `the service retries run #${retrying.id} by itself (checks.failed_runs.retrying_grace: 30m); told then unless it succeeds`;
    const table = await run('alerts', '--config', configFile);
    expect(table.stdout).toMatch(
      new RegExp(
        `^[0-9a-f]{8} pending: held until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC: ${reason.replace(/[()#.]/g, '\\$&')}$`,
        'm',
      ),
    );
    expect(table.stdout).not.toContain('(alerts.for)');

    // The service retries it: the same run, running again. Held while it runs, and saying so.
    sim.control.setRunState(retrying.id, { state: 'running', retrying: false });
    expect((await run('check', '--config', configFile, '--job', 'runs')).code).toBe(0);
    const json = JSON.parse((await run('alerts', '--config', configFile, '--json')).stdout) as {
      fingerprint: string;
      pending?: string[];
    }[];
    const row = json.find((r) => r.fingerprint === `failed_runs/run/${retrying.id}`)!;
    expect(row.pending).toEqual([
      expect.stringMatching(
        new RegExp(`^held: run #${retrying.id} is running again \\(a retry.*\\): told only if the retry fails$`),
      ),
    ]);
    sim.control.setRunState(retrying.id, { state: 'done' });
  });

  it('shows a step name from the service in its pending line as text, not a terminal command', async () => {
    const staging = [...sim.control.state.apps.values()].find((a) => a.envType === 'staging')!;
    const retrying = sim.control.addRun({ appId: staging.id, state: 'error', failedStep: 'restart', retrying: true });
    expect((await run('check', '--config', configFile, '--job', 'runs')).code).toBe(0);
    sim.control.setRunState(retrying.id, { state: 'running', retrying: false });
    const steps = (await apiGet(sim, `/runs/${retrying.id}`)).body.data.steps as { started_at: string | null }[];
    const at = steps.findLastIndex((s) => s.started_at !== null);
    // OSC 52 sets the clipboard, OSC 0 the window title: what a pasted line would then run.
    const hostile = 'restart\u001b]52;c;cm0gLXJmIH4K\u0007\u001b]0;pwned\u0007';
    sim.control.setFault('runs.get', { recordField: { id: retrying.id, field: `steps.${at}.name`, value: hostile } });
    expect((await run('check', '--config', configFile, '--job', 'runs')).code).toBe(0);
    sim.control.clearFaults();

    const table = await run('alerts', '--config', configFile);
    const line = table.stdout.split('\n').find((l) => l.includes(`run #${retrying.id} is running again`))!;
    expect(line).toContain('step restart\\u{1b}]52;c;cm0gLXJmIH4K\\u{7}\\u{1b}]0;pwned\\u{7})');
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(table.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    sim.control.setRunState(retrying.id, { state: 'done' });
  });

  it('says so when nothing is open', async () => {
    Store.open(path.join(dir, 'state.db')).close();
    const { code, stdout } = await run('alerts', '--config', configFile);
    expect(code).toBe(0);
    expect(stdout).toBe('no open alerts\n');
  });
});
