/**
 * The state file cannot be written: a directory where a file is expected, a read-only mount, a
 * full disk. Each time: a clear error naming the file and the cause, a non-zero exit, and the state
 * as it was before (the failed cycle's transaction is rolled back whole; nothing half-written),
 * so the next cycle with room writes its events once.
 *
 * The disk-full cases use SQLite's `max_page_count` on the engine's own connection (deterministic,
 * everywhere), and, where this process may mount (root in a container), a real tiny tmpfs and a
 * read-only bind mount under the `check` command.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Watchdog } from '../../src/app/watchdog.js';
import { main } from '../../src/cli/main.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { sqliteHandle } from '../helpers/state-backends.js';
import { events, faultConfig, manualSim, openWatchdog, tempDir } from './fault-fixture.js';

/** What the tables hold: compared before and after a failed write. */
function contents(db: Database.Database): Record<string, number> {
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  return {
    alerts: count('alerts'),
    events: count('events'),
    outbox: count('outbox'),
    source_health: count('source_health'),
  };
}

function integrity(db: Database.Database): string {
  return String(db.pragma('integrity_check', { simple: true }));
}

/** Problems in every app of the simulator: a new failed run and an expiring certificate each. */
function manyProblems(sim: RunningSimulator): void {
  for (const app of sim.control.state.apps.values()) {
    if (app.deployedAt === null) continue;
    sim.control.addRun({ appId: app.id, action: 'restart', state: 'error' });
    for (const urlId of app.urlIds) sim.control.checks.certificates.expire(urlId, { inDays: 2 });
  }
}

describe('the disk fills up during a cycle (SQLite max_page_count on the engine connection)', () => {
  let sim: RunningSimulator;
  let clock: ManualClock;
  let tmp: ReturnType<typeof tempDir>;
  let wd: Watchdog | undefined;
  beforeEach(async () => {
    ({ sim, clock } = await manualSim({ apps: 40, seed: 3 }));
    tmp = tempDir();
  });
  afterEach(async () => {
    await wd?.stop(500).catch(() => undefined);
    wd = undefined;
    await sim.close();
    tmp.cleanup();
  });

  it('the cycle fails with "the disk is full", writes nothing, and the next cycle with room writes the events once', async () => {
    wd = openWatchdog(faultConfig(sim, tmp.dir, { extra: 'jobs: { jitter: 0s, maintenance: "off" }' }), clock);
    expect((await wd.runOnce()).complete).toBe(true);
    const db = sqliteHandle(wd.store);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const before = contents(db);
    const pages = db.pragma('page_count', { simple: true }) as number;
    // No page beyond what the file has now: the next write that needs a page fails with SQLITE_FULL.
    db.pragma(`max_page_count = ${pages}`);

    manyProblems(sim);
    clock.advance(60_000);
    const failed = await wd.runOnce(['runs', 'urls']);
    expect(failed.complete).toBe(false);
    for (const job of failed.jobs) {
      expect(job.outcome).toBe('failed');
      expect(job.reason).toMatch(/the disk is full/);
      expect(job.reason).toContain(path.join(tmp.dir, 'state.db'));
    }
    expect(contents(db)).toEqual(before);
    expect(integrity(db)).toBe('ok');

    db.pragma('max_page_count = 1073741823');
    clock.advance(60_000);
    const again = await wd.runOnce(['runs', 'urls']);
    expect(again.complete).toBe(true);
    expect(again.events).toBeGreaterThan(0);
    const written = events(wd).slice(before.events);
    expect(written.length).toBe(again.events);
    expect(new Set(written.map((e) => `${e.kind} ${e.fingerprint}`)).size).toBe(written.length);
    expect(integrity(db)).toBe('ok');
  });

  it('the disk stays full for two minutes of cycles: each job says its failure once a minute, with a count', async () => {
    let out = '';
    const logger = createLogger({
      level: 'info',
      format: 'json',
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          out += chunk.toString();
          done();
        },
      }),
    });
    const extra = 'jobs: { jitter: 0s, maintenance: "off" }';
    wd = openWatchdog(faultConfig(sim, tmp.dir, { extra }), clock, { logger });
    expect((await wd.runOnce()).complete).toBe(true);
    const db = sqliteHandle(wd.store);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    manyProblems(sim);
    const before = out.length;

    // Twelve cycles of each job, ten seconds apart: every one fails on the full disk.
    for (let i = 0; i < 12; i++) {
      clock.advance(10_000);
      for (const job of (await wd.runOnce(['runs', 'urls'])).jobs) expect(job.outcome).toBe('failed');
    }

    const lines = out
      .slice(before)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { msg: string; job?: string; repeated?: number });
    const failures = lines.filter((l) => l.msg.startsWith('cycle failed to write its result'));
    for (const job of ['runs', 'urls']) {
      const said = failures.filter((l) => l.job === job);
      // The first at once, then once more after a minute with the count of those held.
      expect(said.length, job).toBe(2);
      expect(said[1]!.msg).toMatch(/\(repeated 6 times in the last 60 s\)$/);
      expect(
        said.reduce((n, l) => n + (l.repeated ?? 1), 0),
        job,
      ).toBe(7);
    }
  });
});

/** Runs a command in-process with captured output. */
async function cli(argv: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const code = await main(argv, { stdout: sink, stderr: sink, env, signal: new AbortController().signal });
  return { code, out };
}

describe('the state file cannot be written, under `check` and `run`', () => {
  let sim: RunningSimulator;
  let tmp: ReturnType<typeof tempDir>;
  let canMount = false;
  const mounts: string[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ apps: 15, seed: 9 });
    tmp = tempDir();
    // Mounting needs root (and a container that allows it); the cases that need it say so.
    const probe = path.join(tmp.dir, 'probe');
    fs.mkdirSync(probe);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
      execFileSync('umount', [probe], { stdio: 'ignore' });
      canMount = true;
    } catch {
      canMount = false;
    }
  });
  afterAll(async () => {
    for (const m of mounts.reverse()) {
      try {
        execFileSync('umount', [m], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
    await sim.close();
    tmp.cleanup();
  });

  /** A config file whose state file is `statePath`. */
  function configAt(dir: string, statePath: string): string {
    const file = path.join(dir, `watchdog-${path.basename(dir)}.yaml`);
    fs.writeFileSync(
      file,
      [
        'api:',
        `  base_url: ${sim.baseUrl}`,
        '  token: ${DMS_API_TOKEN}',
        '  requests_per_second: 1000',
        '  page_size: 100',
        `state: { path: ${JSON.stringify(statePath)} }`,
        'jobs: { jitter: 0s, maintenance: "off" }',
        'notify:',
        '  channels: [{ name: console, type: log }]',
        '  routes: [{ channels: [console] }]',
        'server: { listen: "off" }',
        'log: { level: warn, format: json }',
        '',
      ].join('\n'),
    );
    return file;
  }
  const env = () => ({ DMS_API_TOKEN: sim.adminToken });

  it.each([['check'], ['run']])(
    '%s: a file where the state directory should be: exit 1, the path and the cause named',
    async (command) => {
      const dir = fs.mkdtempSync(path.join(tmp.dir, 'notadir-'));
      fs.writeFileSync(path.join(dir, 'data'), 'a file, not a directory');
      const statePath = path.join(dir, 'data', 'state.db');
      const { code, out } = await cli([command, '--config', configAt(dir, statePath)], env());
      expect(code).toBe(1);
      expect(out).toContain(statePath);
      expect(out).toMatch(/cannot be created|ENOTDIR|not a directory/);
      expect(out).not.toContain(sim.adminToken);
      expect(fs.readFileSync(path.join(dir, 'data'), 'utf8')).toBe('a file, not a directory');
    },
  );

  it('check: the state file on a read-only mount: exit 1, the cause named, the file unchanged', async (ctx) => {
    if (!canMount) return ctx.skip();
    const dir = fs.mkdtempSync(path.join(tmp.dir, 'ro-'));
    const data = path.join(dir, 'data');
    fs.mkdirSync(data);
    const config = configAt(dir, path.join(data, 'state.db'));
    expect((await cli(['check', '--config', config], env())).code).toBe(0);
    const bytes = fs.readFileSync(path.join(data, 'state.db'));
    execFileSync('mount', ['--bind', data, data]);
    mounts.push(data);
    execFileSync('mount', ['-o', 'remount,ro,bind', data]);

    const { code, out } = await cli(['check', '--config', config], env());
    expect(code).toBe(1);
    expect(out).toContain(path.join(data, 'state.db'));
    expect(out).toMatch(/cannot be (opened|created) for writing|unwritable|read-only|readonly/i);
    expect(fs.readFileSync(path.join(data, 'state.db')).equals(bytes)).toBe(true);
  });

  it('check: the disk (a tiny tmpfs) fills up: exit 1, "the disk is full", the earlier state intact and usable', async (ctx) => {
    if (!canMount) return ctx.skip();
    const dir = fs.mkdtempSync(path.join(tmp.dir, 'full-'));
    const data = path.join(dir, 'data');
    fs.mkdirSync(data);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', data]);
    mounts.push(data);
    const statePath = path.join(data, 'state.db');
    const config = configAt(dir, statePath);
    expect((await cli(['check', '--config', config], env())).code).toBe(0);
    const db0 = new Database(statePath, { readonly: true });
    const before = contents(db0);
    db0.close();

    // Fill what is left of the disk, then give the cycle plenty to write.
    const filler = path.join(data, 'filler');
    const fd = fs.openSync(filler, 'w');
    try {
      const block = Buffer.alloc(4096, 1);
      for (;;) fs.writeSync(fd, block);
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      fs.closeSync(fd);
    }
    for (const app of [...sim.control.state.apps.values()].filter((a) => a.deployedAt !== null)) {
      sim.control.addRun({ appId: app.id, action: 'restart', state: 'error' });
    }

    const { code, out } = await cli(['check', '--config', config], env());
    expect(code).toBe(1);
    expect(out).toMatch(/the disk is full/);
    expect(out).toContain(statePath);
    expect(out).not.toContain(sim.adminToken);

    fs.rmSync(filler);
    const db1 = new Database(statePath);
    try {
      expect(integrity(db1)).toBe('ok');
      expect(contents(db1)).toEqual(before);
    } finally {
      db1.close();
    }
    // With room again, the same state file takes the cycle.
    expect((await cli(['check', '--config', config], env())).code).toBe(0);
  });
});
