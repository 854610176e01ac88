/**
 * `deploy-watchdog run` as a real child process against the simulator: it starts and answers
 * /healthz and /readyz, keeps running through a SIGHUP with an invalid file (an alias bomb too),
 * takes a file heavy with aliases, on SIGTERM exits 0 with the database closed and checkpointed,
 * and refuses to start on a file it cannot read with exit 2, the file and the line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { runCli } from '../helpers/cli-harness.js';
import { freePort } from '../helpers/free-port.js';
import { daemonConfigYaml, spawnDaemon, status, until, type Daemon, LOG_CHANNEL_NOTIFY } from './daemon-fixture.js';

let sim: RunningSimulator;
let dir: string;
let daemon: Daemon | undefined;

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 5 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-run-'));
});
afterAll(async () => {
  if (daemon && daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A config file `NAME.yaml` of a daemon on the state file `NAME.db`, its runs every 30 s, its log the channel. */
function configOn(name: string, server: string): string {
  const configFile = path.join(dir, `${name}.yaml`);
  const yaml = daemonConfigYaml(sim, {
    jobs: '{ runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
    notify: LOG_CHANNEL_NOTIFY,
    server,
  });
  fs.writeFileSync(configFile, yaml.replace('./state.db', `./${name}.db`));
  return configFile;
}

// Each test starts a daemon as a process of its own (compiled, from .test-build): 7 s idle, 20 s
// at a load of 15, near the 30 s default. Room for the starts; the waits inside are for events.
describe('run', { timeout: 120_000 }, () => {
  it('serves health, refuses a bad reload, applies a good one, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const configFile = path.join(dir, 'watchdog.yaml');
    const good = daemonConfigYaml(sim, {
      jobs: '{ runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
      notify: LOG_CHANNEL_NOTIFY,
      server: `{ listen: "127.0.0.1:${port}" }`,
    });
    fs.writeFileSync(configFile, good);
    daemon = spawnDaemon(sim, configFile);
    const { exited } = daemon;
    const output = daemon.output;

    const base = `http://127.0.0.1:${port}`;
    await until('/healthz', async () => (await status(`${base}/healthz`)) === 200, output);
    await until('/readyz', async () => (await status(`${base}/readyz`)) === 200, output);
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(
      /deploy_watchdog_cycles_total\{source="runs",outcome="ok"\}/,
    );

    fs.writeFileSync(configFile, good.replace('requests_per_second: 200', 'requests_per_second: fast'));
    daemon.child.kill('SIGHUP');
    await until('the reload to be refused', () => output().includes('configuration refused'), output);
    const problem = output()
      .split('\n')
      .find((l) => l.includes('"configuration problem"'))!;
    expect(JSON.parse(problem)).toMatchObject({ level: 50, key: 'api.requests_per_second' });
    expect(await status(`${base}/healthz`)).toBe(200);
    // Said where an alert can see it, as Prometheus says its own (the exposition lags up to a second).
    const reloadGauge = async (value: number) =>
      (await (await fetch(`${base}/metrics`)).text()).includes(
        `deploy_watchdog_config_last_reload_successful ${value}\n`,
      );
    await until('the refusal in /metrics', () => reloadGauge(0), output);

    // A valid file is applied: the runtime is rebuilt, the listener stays, cycles run again.
    fs.writeFileSync(configFile, good.replace('requests_per_second: 200', 'requests_per_second: 100'));
    daemon.child.kill('SIGHUP');
    await until('the reload', () => output().includes('configuration reloaded'), output);
    await until('/readyz after the reload', async () => (await status(`${base}/readyz`)) === 200, output);
    await until('the reload in /metrics', () => reloadGauge(1), output);

    daemon.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('deploy-watchdog stopped');
    expect(output()).not.toContain(sim.adminToken);

    // Closed: no WAL left behind to replay, and another connection can take the write lock at once.
    const wal = path.join(dir, 'state.db-wal');
    expect(!fs.existsSync(wal) || fs.statSync(wal).size === 0).toBe(true);
    const db = new Database(path.join(dir, 'state.db'), { timeout: 0 });
    try {
      db.exec('BEGIN IMMEDIATE; COMMIT;');
      const runs = db
        .prepare(`SELECT consecutive_failures AS f, last_success_at AS s FROM source_health WHERE job = 'runs'`)
        .get() as { f: number; s: number };
      expect(runs.f).toBe(0);
      expect(runs.s).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});

/** An alias bomb: nine aliases per level, seven levels (see the parser's `maxAliasCount`). */
const ALIAS_BOMB = [
  'x:',
  ...['a', 'b', 'c', 'd', 'e', 'f', 'g'].map(
    (name, i, all) =>
      `  ${name}: &${name} [${Array(9)
        .fill(i === 0 ? 'lol' : `*${all[i - 1]}`)
        .join(', ')}]`,
  ),
].join('\n');

describe('run: a configuration never crashes it', () => {
  it('refuses an alias bomb on SIGHUP and keeps running, then takes 101 routes sharing one alias', async () => {
    const port = await freePort();
    const configFile = path.join(dir, 'aliases.yaml');
    const good = daemonConfigYaml(sim, {
      jobs: '{ runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
      notify: ['channels: [{ name: console, type: log }]', 'routes: [{ channels: &c [console] }]'],
      server: `{ listen: "127.0.0.1:${port}" }`,
    });
    fs.writeFileSync(configFile, good);
    daemon = spawnDaemon(sim, configFile);
    const { output } = daemon;
    const base = `http://127.0.0.1:${port}`;
    await until('/healthz', async () => (await status(`${base}/healthz`)) === 200, output);

    fs.writeFileSync(configFile, `${good}${ALIAS_BOMB}\n`);
    daemon.child.kill('SIGHUP');
    await until('the reload to be refused', () => output().includes('configuration refused'), output);
    const problem = JSON.parse(
      output()
        .split('\n')
        .find((l) => l.includes('"configuration problem"'))!,
    );
    expect(problem).toMatchObject({ level: 50, file: configFile, problem: expect.stringMatching(/aliases expand/) });
    expect(problem.line).toBeGreaterThan(0);
    expect(await status(`${base}/healthz`)).toBe(200);

    const routes = Array.from({ length: 101 }, (_, i) => `    - { match: { app: a${i} }, channels: *c }`);
    fs.writeFileSync(
      configFile,
      good.replace(
        'routes: [{ channels: &c [console] }]',
        `routes:\n    - { match: { app: x }, channels: &c [console] }\n${routes.join('\n')}`,
      ),
    );
    daemon.child.kill('SIGHUP');
    await until('the reload', () => output().includes('configuration reloaded'), output);
    expect(await status(`${base}/healthz`)).toBe(200);

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
  });

  it('says on /readyz and in the log that its state file was deleted under it', { timeout: 120_000 }, async () => {
    const port = await freePort();
    daemon = spawnDaemon(sim, configOn('deleted', `{ listen: "127.0.0.1:${port}" }`));
    const { output } = daemon;
    const readyz = `http://127.0.0.1:${port}/readyz`;
    await until('/readyz', async () => (await status(readyz)) === 200, output, 90_000);
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(path.join(dir, `deleted.db${suffix}`), { force: true });
    // The judgement is made again each second while it is asked.
    let state: { ok: boolean; detail: string } | undefined;
    await until(
      '/readyz to say the file is gone',
      async () => {
        const body = (await (await fetch(readyz)).json()) as {
          checks: { check: string; ok: boolean; detail: string }[];
        };
        state = body.checks.find((c) => c.check === 'state');
        return state?.ok === false;
      },
      output,
    );
    expect(state!.detail).toBe(
      `state database ${path.join(dir, 'deleted.db')}: deleted while the daemon ran: what it writes now goes to the old file, ` +
        'which is lost when it stops; a restart starts from the file at that path (an empty state if none: every open ' +
        'alert is announced again, silences and acknowledgements are gone). Put the file back from a backup and restart',
    );
    expect(await status(readyz)).toBe(503);
    // And the log says it, at the lease's next renewal (every 10 s): a run started now would work beside it.
    await until(
      'the log to say the file is gone',
      () =>
        output()
          .split('\n')
          .some(
            (l) => l.includes('cannot renew the lease on the state file') && l.includes('deleted while the daemon ran'),
          ),
      output,
    );
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
  });

  it('exits 2 at start on a file it cannot read, naming the file and the line', async () => {
    const configFile = path.join(dir, 'bomb.yaml');
    const good = daemonConfigYaml(sim, {
      jobs: '{ runs: "*/30 * * * * *", jitter: 0s }',
      notify: ['channels: [{ name: console, type: log }]'],
      server: 'off',
    });
    fs.writeFileSync(configFile, `${good}${ALIAS_BOMB}\n`);
    const lineOfFirstAlias = `${good}${ALIAS_BOMB}`.split('\n').findIndex((l) => l.includes('*a')) + 1;
    const started = spawnDaemon(sim, configFile);
    expect(await started.exited).toBe(2);
    expect(started.output()).toContain(`${configFile}:${lineOfFirstAlias}: YAML cannot be read`);
  });
});

describe('run and check on one state file', () => {
  // Two daemons start as processes of their own (seconds each at a load of 12; 23 s of 30 went
  // here once), and two checks run: room for that, never a bound on how fast a process starts.
  it(
    'refuses a check while the daemon works on the file, and takes it at once after the daemon is killed',
    { timeout: 180_000 },
    async () => {
      const configFile = path.join(dir, 'lease.yaml');
      fs.writeFileSync(
        configFile,
        daemonConfigYaml(sim, {
          jobs: '{ runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
          notify: ['channels: [{ name: console, type: log }]'],
          server: '{ listen: "off" }',
        }).replace('./state.db', './lease.db'),
      );
      daemon = spawnDaemon(sim, configFile);
      // The lease is the daemon's from its open, before its scheduler starts: no need to wait for a
      // whole cycle (what took most of the time under load).
      await until('the scheduler', () => daemon!.output().includes('scheduler started'), daemon.output, 90_000);
      const env = { DMS_API_TOKEN: sim.adminToken };
      // The second daemon's start and the check run side by side: both are refused by the lease.
      const second = spawnDaemon(sim, configFile);
      const refused = await runCli(['check', '--config', configFile], { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        // Its 30-second schedule is warned of first (a sixth field); the refusal is the error line.
        /^error: deploy-watchdog run \(pid \d+ on .+\) is working on this state file; a check now would send what it sends twice/m,
      );
      expect(refused.stdout).toBe('');
      expect(await second.exited).toBe(2);
      expect(second.output()).toContain('a second daemon would send every message twice');

      daemon.child.kill('SIGKILL');
      await daemon.exited;
      const taken = await runCli(['check', '--config', configFile], { env });
      expect(taken.code, taken.stderr).toBe(0);
    },
  );

  it(
    'stops with exit 1, sending nothing more, once another process took the file over while it stalled',
    { timeout: 180_000 },
    async () => {
      daemon = spawnDaemon(sim, configOn('taken', '{ listen: "off" }'));
      await until('the scheduler', () => daemon!.output().includes('scheduler started'), daemon.output, 90_000);
      // What a run started elsewhere writes once this one's lease expired (a SIGSTOP, a paused VM,
      // past 30 s): this one, renewing again, must not take it back and work beside it.
      const other = {
        id: 'other',
        command: 'run',
        pid: 4242,
        host: 'elsewhere',
        started: 0,
        until: Date.now() + 60_000,
      };
      const db = new Database(path.join(dir, 'taken.db'), { timeout: 5_000 });
      try {
        db.prepare(`UPDATE meta SET value = ? WHERE key = 'runner_lease'`).run(JSON.stringify(other));
        // Renewed every 10 s: the next renewal finds it.
        expect(await daemon.exited).toBe(1);
        expect(daemon.output()).toMatch(
          /deploy-watchdog run \(pid 4242 on elsewhere\) took over this state file: this process had not renewed its lease/,
        );
        expect(daemon.output()).toContain('deploy-watchdog stopped');
        const lease = db.prepare(`SELECT value FROM meta WHERE key = 'runner_lease'`).get() as { value: string };
        expect(JSON.parse(lease.value)).toEqual(other);
      } finally {
        db.close();
      }
    },
  );
});
