/**
 * The crash guarantee on the real daemon: `deploy-watchdog run` as a child process, alerts firing
 * from failed runs in the simulator, Slack (the local webhook receiver) hanging. The daemon is
 * killed with SIGKILL while a message is in flight, Slack comes back, the daemon is started again
 * on the same state file: every message arrives, exactly once except the one that was in flight
 * (which Slack never answered, so it is sent again), and SIGTERM then stops it with exit 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let sim: RunningSimulator;
let receiver: WebhookReceiver;
let dir: string;
const children: ChildProcess[] = [];
let output = '';

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 7 });
  receiver = await startWebhookReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-run-crash-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver.close();
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Polls until `check` holds, in small steps, failing after `ms`. */
async function until(what: string, check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; daemon output:\n${output}`);
}

/** Starts `deploy-watchdog run` on the config; resolves its exit (code or signal). */
function startDaemon(configFile: string): { child: ChildProcess; exited: Promise<number | string | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/bin.ts'), 'run', '--config', configFile, '--stop-timeout', '5s'], {
    cwd: ROOT,
    env: { ...process.env, DMS_API_TOKEN: sim.adminToken },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, exited };
}

/** The outbox as another process sees it (read-only; the daemon keeps writing). */
function outbox(): { status: string; attempts: number; source: string; payload: string }[] {
  const file = path.join(dir, 'state.db');
  if (!fs.existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT status, attempts, source, payload FROM outbox ORDER BY id').all() as never;
  } catch {
    return []; // not migrated yet
  } finally {
    db.close();
  }
}

describe('run, killed mid-delivery', () => {
  it('SIGKILL while Slack hangs, restart: every message delivered, only the one in flight twice; then SIGTERM exits 0', async () => {
    for (const app of [...sim.control.state.apps.values()].filter((a) => a.state === 'running').slice(0, 2)) {
      sim.control.addRun({ appId: app.id, action: 'update', state: 'error', failedStep: 'restart', reason: `crash test ${app.name}` });
    }
    const configFile = path.join(dir, 'watchdog.yaml');
    fs.writeFileSync(
      configFile,
      [
        'api:',
        `  base_url: ${sim.baseUrl}`,
        '  token: ${DMS_API_TOKEN}',
        '  requests_per_second: 200',
        'state: { path: ./state.db }',
        'jobs: { runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
        'notify:',
        `  channels: [{ name: ops, type: slack, webhook_url: "${receiver.url}", timeout: 60000 }]`,
        '  routes: [{ channels: [ops] }]',
        '  max_items_per_message: 100',
        '  delivery: { timeout: 60s, interval: 1s }',
        'server: { listen: "off" }',
        'log: { level: info, format: json }',
        '',
      ].join('\n'),
    );

    receiver.setMode('hang');
    const first = startDaemon(configFile);
    await until('a delivery in flight', () => receiver.requests >= 1);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    // One channel sends one message at a time: exactly one was in flight, none answered.
    expect(receiver.requests).toBe(1);
    expect(receiver.received).toHaveLength(0);
    const queued = outbox();
    expect(queued.length).toBeGreaterThan(0);
    expect(queued.every((r) => r.status === 'pending' && r.attempts === 0)).toBe(true);

    receiver.setMode('ok');
    const second = startDaemon(configFile);
    await until('every notification sent', () => {
      const rows = outbox();
      return rows.length > 0 && rows.every((r) => r.status === 'sent' || r.status === 'suppressed');
    });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // Exactly once, except the one request that hung when the daemon was killed.
    expect(receiver.requests).toBe(receiver.received.length + 1);
    const texts = receiver.received.map((p) => JSON.stringify(p));
    const events = outbox()
      .filter((r) => r.source === 'event' && r.status === 'sent')
      .map((r) => JSON.parse(r.payload) as AlertEvent);
    expect(events.map((e) => e.summary).join('\n')).toMatch(/crash test/);
    for (const e of events) {
      const needle = JSON.stringify(e.summary).slice(1, -1).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      expect(texts.filter((t) => t.includes(needle)), e.summary).toHaveLength(1);
    }
    expect(outbox().every((r) => r.status !== 'sent' || r.attempts === 1)).toBe(true);
    expect(output).not.toContain(sim.adminToken);
    expect(output).not.toContain(new URL(receiver.url).pathname);
  });
});
