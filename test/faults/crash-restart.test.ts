/**
 * `deploy-watchdog run` SIGKILLed at random points (a seeded PRNG picks them) across many cycles of
 * changing data, restarted each time on the same state file. After a final run that is left to
 * settle and stopped with SIGTERM:
 * - every alert event written was delivered to Slack (webhook stand-in) and by mail (SMTP sink):
 *   the peers accepted every message recorded as sent, and at most one more per kill and channel
 *   (a kill between the peer's answer and "recorded as sent" repeats that one message once);
 * - no outbox row is left waiting, given up or lost;
 * - no remediation action was taken twice: one idempotency key per failed run, however many
 *   restarts sent it (the service answers a repeated key from its store and starts nothing new).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prng } from '../../packages/simulator/src/prng.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  churnConfigYaml,
  expectDelivered,
  expectOneKeyPerRetriedRun,
  stageProblems,
  tempDir,
} from './fault-fixture.js';
import { binArgs } from '../helpers/test-build.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Kills before the final, undisturbed run. */
const KILLS = 8;
/** Kill points: this long after the spawn (startup included, so some die before their first cycle). */
const KILL_AFTER_MS = { min: 300, max: 3_000 };
const SEED = 20261121;

let sim: RunningSimulator;
let slack: WebhookReceiver;
let mail: SmtpSink;
let tmp: ReturnType<typeof tempDir>;
let output = '';
const children = new Set<ChildProcess>();

beforeAll(async () => {
  sim = await startSimulator({ apps: 16, seed: 4 });
  slack = await startWebhookReceiver();
  mail = await startSmtpSink();
  tmp = tempDir('dw-crash-');
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await slack.close();
  await mail.close();
  await sim.close();
  tmp.cleanup();
});

function writeConfig(): string {
  const file = path.join(tmp.dir, 'watchdog.yaml');
  fs.writeFileSync(file, churnConfigYaml(sim, { slack, mail }, '{ path: ./state.db }'));
  return file;
}

function start(config: string): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(process.execPath, binArgs(['run', '--config', config, '--stop-timeout', '5s']), {
    cwd: ROOT,
    env: { ...process.env, DMS_API_TOKEN: sim.adminToken, SLACK_URL: slack.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StateDb {
  pending(): number;
  lastRunsSuccess(): number;
  close(): void;
}

function openState(): StateDb | null {
  const file = path.join(tmp.dir, 'state.db');
  if (!fs.existsSync(file)) return null;
  const db = new Database(file, { readonly: true, timeout: 2_000 });
  return {
    pending: () =>
      (db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE status IN ('pending', 'held')`).get() as { n: number }).n,
    lastRunsSuccess: () =>
      (
        db.prepare(`SELECT last_success_at AS t FROM source_health WHERE job = 'runs'`).get() as
          { t: number } | undefined
      )?.t ?? 0,
    close: () => db.close(),
  };
}

describe('SIGKILL of `run` at random points across many cycles', () => {
  it('delivers every alert, repeats at most the one message in flight per kill, leaves nothing waiting, and never acts twice', async () => {
    const config = writeConfig();
    const rng = new Prng(SEED);
    for (let round = 0; round < KILLS; round++) {
      stageProblems(sim, round, rng);
      const { child, exited } = start(config);
      await sleep(rng.int(KILL_AFTER_MS.min, KILL_AFTER_MS.max));
      child.kill('SIGKILL');
      expect((await exited).signal).toBe('SIGKILL');
    }

    // The last run is left alone until it has completed cycles after its start and sent everything.
    stageProblems(sim, KILLS, rng);
    const finalStart = Date.now();
    const { child, exited } = start(config);
    const deadline = Date.now() + 30_000;
    let settled = 0;
    while (Date.now() < deadline && settled < 3) {
      await sleep(250);
      const db = openState();
      if (!db) continue;
      try {
        settled = db.lastRunsSuccess() > finalStart + 1_000 && db.pending() === 0 ? settled + 1 : 0;
      } catch {
        settled = 0; // a table not created yet
      } finally {
        db.close();
      }
    }
    child.kill('SIGTERM');
    expect((await exited).code, output.slice(-3000)).toBe(0);
    expect(settled, `the final run did not settle:\n${output.slice(-3000)}`).toBe(3);

    const db = new Database(path.join(tmp.dir, 'state.db'), { readonly: true });
    try {
      // A kill between the peer's answer and "recorded as sent" makes the next start send that message again.
      expectDelivered(db, { slack, mail }, { repeats: KILLS, atLeast: KILLS });
    } finally {
      db.close();
    }
    expectOneKeyPerRetriedRun(sim);
    expect(output).not.toContain(sim.adminToken);
  }, 120_000);
});
