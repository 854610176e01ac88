/**
 * SIGHUP before `run` is up: kept, not fatal. The process-level part (a listener from the first
 * instant, several signals delivered as one reload) is tested on `Hangups`; the command part runs
 * `run` in-process with a hangup that arrives before the daemon has started.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Hangups } from '../../src/cli/hangups.js';
import run from '../../src/cli/run.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';

let sim: RunningSimulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ apps: 4, seed: 3 });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-hup-'));
});
afterAll(async () => {
  await sim.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('Hangups', () => {
  it('keeps the SIGHUPs that come before anyone listens, and delivers them as one', () => {
    const before = process.listenerCount('SIGHUP');
    const hangups = new Hangups(process);
    try {
      expect(process.listenerCount('SIGHUP')).toBe(before + 1);
      process.emit('SIGHUP', 'SIGHUP');
      process.emit('SIGHUP', 'SIGHUP');
      const heard: number[] = [];
      hangups.onHangup(() => heard.push(heard.length));
      expect(heard).toEqual([0]);
      process.emit('SIGHUP', 'SIGHUP');
      expect(heard).toEqual([0, 1]);
    } finally {
      hangups.close();
    }
    expect(process.listenerCount('SIGHUP')).toBe(before);
  });
});

describe('run', () => {
  it('applies a SIGHUP that arrived while it was starting, once it has started', async () => {
    const daemon = startRun();
    // Before the daemon is even open.
    daemon.hangups.receive();
    await daemon.until(() => daemon.messages().includes('configuration reloaded'));
    const seen = await daemon.stop();
    expect(seen.indexOf('deploy-watchdog started')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('SIGHUP: reloading the configuration')).toBeGreaterThan(
      seen.indexOf('deploy-watchdog started'),
    );
    expect(seen.filter((m) => m === 'configuration reloaded')).toHaveLength(1);
  }, 90_000);

  it('applies a new log.level on SIGHUP to the loggers made before it (the API client of the new config)', async () => {
    const daemon = startRun();
    await daemon.until(() => daemon.messages().includes('deploy-watchdog started'));
    // The reload builds the new runtime (its API client's logger a child made at info) before
    // the level changes; its runs job then reads every second.
    daemon.rewrite((yaml) =>
      yaml.replace('log: { level: info,', 'log: { level: debug,').replace('runs: "0 0 1 1 *"', 'runs: "* * * * * *"'),
    );
    expect(daemon.messages()).not.toContain('api request');
    daemon.hangups.receive();
    await daemon.until(() => daemon.messages().includes('configuration reloaded'));
    await daemon.until(() => daemon.messages().includes('api request'));
    const seen = await daemon.stop();
    expect(seen.indexOf('api request')).toBeGreaterThan(seen.indexOf('configuration reloaded'));
  }, 90_000);

  it('says a reloaded log.format waits for a restart, and keeps writing JSON', async () => {
    const daemon = startRun();
    await daemon.until(() => daemon.messages().includes('deploy-watchdog started'));
    daemon.rewrite((yaml) => yaml.replace('format: json', 'format: pretty'));
    daemon.hangups.receive();
    await daemon.until(() => daemon.messages().includes('configuration reloaded'));
    // messages() parses every line as JSON: a pretty line after the reload would throw.
    const seen = await daemon.stop();
    expect(seen).toContain('log.format changed: it takes effect at the next restart');
  }, 90_000);

  it('coalesces a burst of SIGHUPs during a slow cycle into one reload, which lets the cycle finish', async () => {
    // The first cycle's read of runs takes a while: the burst comes while it is in flight.
    sim.control.setFault('runs.list', { latencyMs: 1_500 });
    try {
      const daemon = startRun();
      await daemon.until(() => daemon.messages().includes('deploy-watchdog started'));
      await daemon.until(() => sim.control.requests().some((r) => r.fn === 'runs.list'));
      for (let i = 0; i < 20; i++) daemon.hangups.receive();
      await daemon.until(() => daemon.messages().includes('configuration reloaded'));
      // Time for a second reload, were one queued.
      await new Promise((r) => setTimeout(r, 500));
      const seen = await daemon.stop();
      expect(seen.filter((m) => m === 'SIGHUP: reloading the configuration')).toHaveLength(1);
      expect(seen.filter((m) => m === 'configuration reloaded')).toHaveLength(1);
      // The cycle in flight kept its client: it completed, and nothing said runs could not be read.
      expect(seen.indexOf('cycle complete')).toBeGreaterThanOrEqual(0);
      expect(seen.indexOf('cycle complete')).toBeLessThan(seen.indexOf('configuration reloaded'));
      expect(seen.filter((m) => m.startsWith('cannot read'))).toEqual([]);
    } finally {
      sim.control.clearFaults();
    }
  }, 90_000);
});

/** `run` in-process on a minimal config, its log lines' messages, and a stop. */
function startRun() {
  const configFile = path.join(dir, 'watchdog.yaml');
  fs.writeFileSync(
    configFile,
    [
      'api:',
      `  base_url: ${sim.baseUrl}`,
      '  token: ${DMS_API_TOKEN}',
      '  requests_per_second: 200',
      'state: { path: ./state.db }',
      'jobs: { runs: "0 0 1 1 *", attention: "off", urls: "off", backups: "off", maintenance: "off", servers: "off", jitter: 0s }',
      'notify:',
      '  channels: [{ name: console, type: log }]',
      '  routes: [{ channels: [console] }]',
      'server: { listen: "off" }',
      'log: { level: info, format: json }',
      '',
    ].join('\n'),
  );
  let out = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const abort = new AbortController();
  const hangups = new Hangups();
  const exit = run.run(['--config', configFile], {
    stdout,
    stderr: stdout,
    env: { DMS_API_TOKEN: sim.adminToken },
    signal: abort.signal,
    hangups,
  });
  const messages = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
  return {
    hangups,
    messages,
    /** Rewrites the config file (for the next SIGHUP). */
    rewrite(edit: (yaml: string) => string): void {
      fs.writeFileSync(configFile, edit(fs.readFileSync(configFile, 'utf8')));
    },
    /** Waits (up to 60 s of wall time: a loaded machine starts a daemon slowly) for `condition`. */
    async until(condition: () => boolean): Promise<void> {
      const end = Date.now() + 60_000;
      while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
      expect(condition()).toBe(true);
    },
    /** Stops `run`, expects exit 0, and answers every message it logged. */
    async stop(): Promise<string[]> {
      abort.abort(new Error('test over'));
      expect(await exit).toBe(0);
      return messages();
    },
  };
}
