/**
 * `deploy-watchdog run` as a real child process with its state in a real PostgreSQL
 * (`state.url` from $DATABASE_URL), against the simulator, telling a Slack stand-in. Its cycles
 * write alerts and messages to PostgreSQL; when PostgreSQL stops mid-run the daemon does what it
 * does when its SQLite file cannot be written: each cycle fails with a clear error (the URL,
 * never the password), nothing is half-written, the daemon stays up (/healthz) and says it is not
 * ready (/readyz); once PostgreSQL is back, the next cycle finds what happened meanwhile and the
 * team hears of it, once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/lib/secret.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { Store } from '../../src/state/store.js';
import { freePort } from '../helpers/free-port.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { daemonConfigYaml, spawnDaemon, status, until, type Daemon } from './daemon-fixture.js';

let sim: RunningSimulator;
let pg: PostgresCluster;
let slack: WebhookReceiver;
let dir: string;
let daemon: Daemon | undefined;

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 5 });
  pg = startPostgres();
  slack = await startWebhookReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-run-pg-'));
  // A cluster of its own (the test stops it): initdb and a start, seconds that load stretches.
}, 120_000);
afterAll(async () => {
  if (daemon && daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
  await slack.close();
  await sim.close();
  pg.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Complete cycles of the runs job so far, from /metrics. */
async function okCycles(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/deploy_watchdog_cycles_total\{source="runs",outcome="ok"\} (\d+)/.exec(text)?.[1] ?? 0);
}

/** The Slack messages that mention `text`. */
const messagesAbout = (text: string) => slack.received.filter((p) => JSON.stringify(p).includes(text));

/** A deployed app of the simulator. */
function deployedApp(skip: number): number {
  const app = [...sim.control.state.apps.values()].filter((a) => a.deployedAt !== null)[skip];
  if (!app) throw new Error('not enough deployed apps');
  return app.id;
}

describe('run on PostgreSQL', () => {
  // Room for its waits, each of which bounds itself (`until`, 30s): seconds of work on a quiet
  // machine, but at a load of 20-32 the daemon's start and first cycles alone passed the 30s
  // default timeout, and the test failed with nothing wrong.
  it('writes its cycles there; PostgreSQL stopped mid-run: a clear error each cycle, nothing lost, on again once it is back', async () => {
    const url = pg.url(pg.createDatabase());
    const port = await freePort();
    const configFile = path.join(dir, 'watchdog.yaml');
    fs.writeFileSync(
      configFile,
      daemonConfigYaml(sim, {
        state: '{ url: "${DATABASE_URL}", connect_timeout: 2s, statement_timeout: 5s }',
        jobs: '{ runs: "*/2 * * * * *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", installers: "off", jitter: 0s }',
        notify: [
          `channels: [{ name: ops, type: slack, webhook_url: "${slack.url}" }]`,
          'routes: [{ channels: [ops] }]',
        ],
        server: `{ listen: "127.0.0.1:${port}" }`,
      }),
    );
    sim.control.addRun({ appId: deployedApp(0), state: 'error', reason: 'failed before the outage' });
    daemon = spawnDaemon(sim, configFile, '5s', { DATABASE_URL: url });
    const { output } = daemon;
    const base = `http://127.0.0.1:${port}`;

    // The daemon's start is in this wait: 13s of it at a load of 12, where 30s did not hold.
    await until('the first failure told', () => messagesAbout('failed before the outage').length > 0, output, 90_000);
    await until('/readyz', async () => (await status(`${base}/readyz`)) === 200, output);
    const reader = Store.openPostgres(
      { url: new Secret(url), connectTimeoutMs: 5_000, statementTimeoutMs: 5_000 },
      { mustExist: true },
    );
    try {
      expect(reader.db.prepare(`SELECT COUNT(*) AS n FROM alerts WHERE status = 'firing'`).get()).toEqual({ n: 1 });
      await until(
        'the message recorded as sent',
        () =>
          (reader.db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE status = 'sent'`).get() as { n: number }).n === 1,
        output,
      );
    } finally {
      reader.close();
    }

    // PostgreSQL goes away; a new problem happens meanwhile.
    pg.stop('fast');
    const failuresBefore = output().split('cycle failed to write its result').length;
    sim.control.addRun({ appId: deployedApp(1), state: 'error', reason: 'failed during the outage' });
    await until(
      'a cycle to fail on the lost state',
      // Said once, then once a minute with a count (log.repeat_every).
      () => output().split('cycle failed to write its result').length > failuresBefore,
      output,
    );
    const failure = output()
      .split('\n')
      .find((l) => l.includes('cycle failed to write its result') && l.includes('cannot be reached'));
    expect(failure, output()).toBeDefined();
    expect(failure).toContain(`postgres://watchdog@127.0.0.1:${pg.port}/`);
    expect(await status(`${base}/healthz`)).toBe(200);
    // /readyz answers the last judgement, made again each second while it is asked.
    let readyz = { status: 0, body: '' };
    await until(
      '/readyz to say the state cannot be reached',
      async () => {
        const res = await fetch(`${base}/readyz`);
        readyz = { status: res.status, body: await res.text() };
        return /PostgreSQL cannot be reached/.test(readyz.body);
      },
      output,
    );
    expect(readyz.status).toBe(503);
    expect(daemon.child.exitCode).toBeNull();

    // Back: the next cycles see the failure of the outage, and the team hears of it once.
    pg.start();
    await until('the outage failure told', () => messagesAbout('failed during the outage').length > 0, output);
    await until('/readyz again', async () => (await status(`${base}/readyz`)) === 200, output);
    // Two cycles more, and still once: nothing is told twice.
    const cycles = await okCycles(base);
    await until('two more cycles', async () => (await okCycles(base)) >= cycles + 2, output);
    expect(messagesAbout('failed during the outage')).toHaveLength(1);
    expect(messagesAbout('failed before the outage')).toHaveLength(1);

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(output()).toContain('deploy-watchdog stopped');
    expect(output()).not.toContain(pg.password);
    expect(output()).not.toContain(sim.adminToken);
  }, 240_000);
});
