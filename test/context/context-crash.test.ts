/**
 * `deploy-watchdog run` SIGKILLed between the cycle that asked for an alert's context and the read
 * of it (logs.tail hangs, so the read is in flight and the alert's messages are held waiting for
 * it): nothing is lost. Restarted on the same state file, the daemon reads the context and the
 * alert goes out with its log lines; or, when the read cannot be made, the alert goes out without
 * them once `notify.context.wait` has passed since the restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { healEstate } from '../../packages/simulator/src/demo/heal-estate.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { PLANS_WITH_LOGS } from '../../packages/simulator/src/vocabulary.js';
import { tempDir } from '../faults/fault-fixture.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { binArgs } from '../helpers/test-build.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

let sim: RunningSimulator;
let slack: WebhookReceiver;
let mail: SmtpSink;
let tmp: ReturnType<typeof tempDir>;
let output = '';
const children = new Set<ChildProcess>();

beforeEach(async () => {
  sim = await startSimulator({ apps: 16, seed: 4 });
  healEstate(sim.control);
  slack = await startWebhookReceiver();
  mail = await startSmtpSink();
  tmp = tempDir('dw-context-crash-');
  output = '';
});
afterEach(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  await slack.close();
  await mail.close();
  await sim.close();
  tmp.cleanup();
});

/** The daemon's config: the runs job every second, both channels, the context wait given. */
function writeConfig(wait: string): string {
  const file = path.join(tmp.dir, 'watchdog.yaml');
  fs.writeFileSync(
    file,
    [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      '  requests_per_second: 500',
      '  timeout: 1m',
      'state: { path: ./state.db }',
      'jobs: { runs: "* * * * * *", urls: "off", backups: "off", attention: "off", maintenance: "off", servers: "off", jitter: 0s }',
      'notify:',
      '  channels:',
      '    - { name: slack, type: slack, webhook_url: "${SLACK_URL}" }',
      `    - { name: mail, type: email, smtp: { host: 127.0.0.1, port: ${mail.port}, secure: none }, from: watchdog@example.com, to: [ops@example.com] }`,
      '  routes: [{ channels: [slack, mail] }]',
      '  delivery: { interval: 200ms }',
      `  context: { wait: ${wait} }`,
      'server: { listen: "off" }',
      'log: { level: info, format: json }',
      '',
    ].join('\n'),
  );
  return file;
}

function start(config: string): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
} {
  const child = spawn(process.execPath, binArgs(['run', '--config', config, '--stop-timeout', '5s']), {
    cwd: ROOT,
    env: { ...process.env, DMS_API_TOKEN: sim.adminToken, SLACK_URL: slack.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited };
}

/** The state file's view of the alert's context and messages, read as another process would. */
function stateOf(runId: number): { context: string | undefined; outbox: string[] } {
  const file = path.join(tmp.dir, 'state.db');
  if (!fs.existsSync(file)) return { context: undefined, outbox: [] };
  const db = new Database(file, { readonly: true, timeout: 2_000 });
  try {
    const context = db.prepare('SELECT status FROM alert_context WHERE subject = ?').get(`run/${runId}`) as
      { status: string } | undefined;
    const outbox = db
      .prepare('SELECT channel, decision, status FROM outbox WHERE fingerprint = ? ORDER BY id')
      .all(`failed_runs/run/${runId}`) as { channel: string; decision: string; status: string }[];
    return { context: context?.status, outbox: outbox.map((r) => `${r.channel} ${r.decision} ${r.status}`) };
  } catch {
    return { context: undefined, outbox: [] }; // tables not created yet
  } finally {
    db.close();
  }
}

/**
 * Starts the daemon on a failed restart of an app with logs while logs.tail hangs, and SIGKILLs it
 * once the cycle has asked for the context, the read is in flight and the messages wait for it.
 */
async function killWhileReading(config: string): Promise<number> {
  const app = [...sim.control.state.apps.values()].find(
    (a) =>
      a.envType === 'production' &&
      a.state === 'running' &&
      a.deployedAt !== null &&
      PLANS_WITH_LOGS.includes(sim.control.state.projectOf(a).plan),
  )!;
  const run = sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', reason: 'oom-killed at startup' });
  sim.control.setFault('logs.tail', { hang: true });
  const { child, exited } = start(config);
  await vi.waitFor(
    () => {
      expect(
        sim.control.requests().some((r) => r.fn === 'logs.tail'),
        output.slice(-2000),
      ).toBe(true);
      expect(stateOf(run.id)).toEqual({
        context: 'pending',
        outbox: ['slack awaiting_context held', 'mail awaiting_context held'],
      });
    },
    { timeout: 30_000, interval: 100 },
  );
  child.kill('SIGKILL');
  expect((await exited).signal).toBe('SIGKILL');
  expect(JSON.stringify(slack.received)).not.toContain(`#${run.id}`);
  return run.id;
}

describe('SIGKILL between the cycle and the context read', () => {
  it('the restarted daemon reads the context and the alert goes out with its log lines', async () => {
    const config = writeConfig('10m');
    const runId = await killWhileReading(config);

    sim.control.clearFaults();
    const { child, exited } = start(config);
    await vi.waitFor(
      () => {
        expect(
          mail.messages.some((m) => (m.text ?? '').includes(`#${runId}`)),
          output.slice(-2000),
        ).toBe(true);
        expect(stateOf(runId).outbox).toEqual(['slack deliver sent', 'mail deliver sent']);
      },
      { timeout: 30_000, interval: 100 },
    );
    child.kill('SIGTERM');
    expect((await exited).code, output.slice(-2000)).toBe(0);

    const line = `main: ERROR run ${runId} (restart) step check failed: oom-killed at startup`;
    const payloads = slack.received.filter((p) => JSON.stringify(p).includes(`#${runId}`));
    expect(payloads).toHaveLength(1);
    expect(JSON.stringify(payloads[0])).toContain(line);
    expect(mail.messages.filter((m) => (m.text ?? '').includes(line))).toHaveLength(1);
    expect(stateOf(runId).context).toBe('ready');
  }, 90_000);

  it('when the read still cannot be made, the alert goes out without it once the wait has passed since the restart', async () => {
    const runId = await killWhileReading(writeConfig('10m'));

    // Still hanging; a short wait this time, counted from the restart.
    const { child, exited } = start(writeConfig('2s'));
    await vi.waitFor(
      () => {
        expect(
          mail.messages.some((m) => (m.text ?? '').includes(`#${runId}`)),
          output.slice(-2000),
        ).toBe(true);
        expect(stateOf(runId).outbox).toEqual(['slack context_wait_over sent', 'mail context_wait_over sent']);
      },
      { timeout: 30_000, interval: 100 },
    );
    child.kill('SIGTERM');
    expect((await exited).code, output.slice(-2000)).toBe(0);
    const payloads = slack.received.filter((p) => JSON.stringify(p).includes(`#${runId}`));
    expect(payloads).toHaveLength(1);
    expect(JSON.stringify(payloads[0])).not.toContain('```');
    expect(output).not.toContain(sim.adminToken);
  }, 90_000);
});
