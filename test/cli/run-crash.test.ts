/**
 * The crash guarantee on the real daemon: `deploy-watchdog run` as a child process, alerts firing
 * from failed runs in the simulator, Slack (the local webhook receiver) hanging. The daemon is
 * killed with SIGKILL while a message is in flight, Slack comes back, the daemon is started again
 * on the same state file: every message arrives, exactly once except the one that was in flight
 * (which Slack never answered, so it is sent again), and SIGTERM then stops it with exit 0.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { daemonConfigYaml, spawnDaemon, until, type Daemon } from './daemon-fixture.js';

let sim: RunningSimulator;
let receiver: WebhookReceiver;
let dir: string;
const daemons: Daemon[] = [];
const output = () => daemons.map((d) => d.output()).join('');

beforeAll(async () => {
  sim = await startSimulator({ apps: 8, seed: 7 });
  receiver = await startWebhookReceiver();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-run-crash-'));
});
afterAll(async () => {
  for (const { child } of daemons) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await receiver.close();
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function start(configFile: string): Daemon {
  const daemon = spawnDaemon(sim, configFile);
  daemons.push(daemon);
  return daemon;
}

/** The outbox as another process sees it (read-only; the daemon keeps writing). */
function outbox(): { status: string; attempts: number; source: string; payload: string }[] {
  const file = path.join(dir, 'state.db');
  if (!fs.existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        `SELECT o.status, o.attempts, o.source, COALESCE(b.body, o.payload) AS payload
       FROM outbox AS o LEFT JOIN outbox_bodies AS b ON b.body_id = o.body_id ORDER BY o.id`,
      )
      .all() as never;
  } catch {
    return []; // not migrated yet
  } finally {
    db.close();
  }
}

describe('run, killed mid-delivery', () => {
  it('SIGKILL while Slack hangs, restart: every message delivered, only the one in flight twice; then SIGTERM exits 0', async () => {
    for (const app of [...sim.control.state.apps.values()].filter((a) => a.state === 'running').slice(0, 2)) {
      sim.control.addRun({
        appId: app.id,
        action: 'update',
        state: 'error',
        failedStep: 'restart',
        reason: `crash test ${app.name}`,
      });
    }
    const configFile = path.join(dir, 'watchdog.yaml');
    fs.writeFileSync(
      configFile,
      daemonConfigYaml(sim, {
        jobs: '{ runs: "*/30 * * * * *", maintenance: "off", jitter: 0s }',
        notify: [
          `channels: [{ name: ops, type: slack, webhook_url: "${receiver.url}", timeout: 60000 }]`,
          'routes: [{ channels: [ops] }]',
          'max_items_per_message: 100',
          'delivery: { timeout: 60s, interval: 1s }',
        ],
        server: '{ listen: "off" }',
      }),
    );

    receiver.setMode('hang');
    const first = start(configFile);
    // Killed once a message is in flight and both failed runs are queued: the jobs' first cycles
    // commit in any order, and on a loaded machine the servers job's alert may be the first sent
    // while the runs job still reads.
    const crashQueued = () => outbox().filter((r) => r.source === 'event' && r.payload.includes('crash test')).length;
    await until(
      'a delivery in flight and both failed runs queued',
      () => receiver.requests >= 1 && crashQueued() >= 2,
      output,
    );
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    // One channel sends one message at a time: exactly one was in flight, none answered.
    expect(receiver.requests).toBe(1);
    expect(receiver.received).toHaveLength(0);
    const queued = outbox();
    expect(queued.length).toBeGreaterThan(0);
    // None tried yet: pending, or held while its alert's context is read (`awaiting_context`,
    // which a loaded machine may still be doing when the kill comes).
    expect(queued.filter((r) => !['pending', 'held'].includes(r.status) || r.attempts !== 0)).toEqual([]);

    receiver.setMode('ok');
    const second = start(configFile);
    await until(
      'every notification sent',
      () => {
        const rows = outbox();
        return rows.length > 0 && rows.every((r) => r.status === 'sent' || r.status === 'suppressed');
      },
      output,
    );
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
      const needle = JSON.stringify(e.summary)
        .slice(1, -1)
        .replace(/&/g, '&amp;')
        .replace(/</g, '&lt;')
        .replace(/>/g, '&gt;');
      expect(
        texts.filter((t) => t.includes(needle)),
        e.summary,
      ).toHaveLength(1);
    }
    expect(outbox().every((r) => r.status !== 'sent' || r.attempts === 1)).toBe(true);
    expect(output()).not.toContain(sim.adminToken);
    expect(output()).not.toContain(new URL(receiver.url).pathname);
  });
});
