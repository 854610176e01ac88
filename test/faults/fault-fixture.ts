/**
 * Shared set-up of the fault suite: a small simulator on loopback driven by a ManualClock the
 * engine shares, a temp state directory, a config built from YAML, and small helpers to read what
 * the engine wrote. Everything real: HTTP to the simulator, SQLite in a temp file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../src/lib/logger.js';
import { Watchdog, type WatchdogOptions } from '../../src/app/watchdog.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { ManualClock } from '../../src/lib/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.js';
import type { SqlDatabase } from '../../src/state/sql-database.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A temp directory removed by `cleanup`. */
export function tempDir(prefix = 'dw-faults-'): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A simulator whose time is a ManualClock that the engine shares. */
export async function manualSim(
  options: SimulatorOptions = {},
): Promise<{ sim: RunningSimulator; clock: ManualClock }> {
  const clock = new ManualClock();
  const sim = await startSimulator({ apps: 20, seed: 7, ...options, clock });
  return { sim, clock };
}

/**
 * The suite's config: the simulator, a state file in `dir`, no listener, no retries unless `extra`
 * says so, small pages (lists span several pages, so a shift can happen between two of them).
 * The request timeout is generous (5s) so a healthy answer never times out on a loaded CI machine;
 * a case about hanging answers passes a short `timeout` so they end quickly. `extra` is YAML
 * appended at the top level (sections not already present), `notify` replaces the default
 * log-only notify section.
 */
export function faultConfig(
  sim: RunningSimulator,
  dir: string,
  options: { extra?: string; notify?: string; api?: string; pageSize?: number; timeout?: string } = {},
): Config {
  const text = [
    'api:',
    '  base_url: ${SIM_URL}',
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    `  timeout: ${options.timeout ?? '5s'}`,
    `  page_size: ${options.pageSize ?? 10}`,
    options.api ?? '  max_retries: 0',
    'state:',
    '  path: ./state.db',
    options.notify ??
      ['notify:', '  channels: [{ name: console, type: log }]', '  routes: [{ channels: [console] }]'].join('\n'),
    'server:',
    '  listen: "off"',
    options.extra ?? '',
  ].join('\n');
  return parseConfig(text, { SIM_URL: sim.baseUrl, DMS_API_TOKEN: sim.adminToken }, 'faults.yaml', { baseDir: dir });
}

/** Opens a Watchdog on a config with the shared clock and a silent logger. */
export function openWatchdog(config: Config, clock: ManualClock, extra: Partial<WatchdogOptions> = {}): Watchdog {
  return Watchdog.open({ config, clock, logger: silentLogger, ...extra });
}

/** One alert event row. */
export interface EventRow {
  kind: string;
  fingerprint: string;
}

/** Every alert event written, oldest first. */
export function events(wd: Watchdog): EventRow[] {
  return wd.store.db.prepare('SELECT kind, fingerprint FROM events ORDER BY id').all() as EventRow[];
}

/** Fingerprints of the firing alerts of a job, sorted. */
export function firing(wd: Watchdog, job: string): string[] {
  const rows = wd.store.db
    .prepare(`SELECT fingerprint FROM alerts WHERE status = 'firing' AND job = ? ORDER BY fingerprint`)
    .all(job) as { fingerprint: string }[];
  return rows.map((r) => r.fingerprint);
}

/**
 * Waits for `work` while moving the manual clock forward in `stepMs` steps, so waits on the clock
 * (retry backoff, Retry-After, send timeouts) end without sleeping long in real time. With
 * `realMs` > 0 each step also lets that much real time pass, for work that needs real I/O to
 * finish before its clock-driven timeout (an SMTP conversation).
 */
export async function advancing<T>(clock: ManualClock, work: Promise<T>, stepMs = 1_000, realMs = 0): Promise<T> {
  let done = false;
  const result = work.finally(() => {
    done = true;
  });
  while (!done) {
    await new Promise<void>((resolve) => (realMs > 0 ? setTimeout(resolve, realMs) : setImmediate(resolve)));
    if (!done) clock.advance(stepMs);
  }
  return result;
}

/**
 * How many messages the notifier recorded as delivered on a channel: one per group per delivery
 * round (every row of a group due in a round goes out in one message and is marked sent with the
 * same time) plus one per notice. Compared with what the peer accepted, it shows each message
 * arrived once, whatever the rendering looks like.
 */
export function recordedMessages(db: Pick<SqlDatabase, 'prepare'>, channel: string): number {
  const groups = db
    .prepare(
      `SELECT COUNT(*) AS n FROM (SELECT DISTINCT group_key, sent_at FROM outbox WHERE channel = ? AND status = 'sent' AND source = 'event')`,
    )
    .get(channel) as { n: number };
  const notices = db
    .prepare(`SELECT COUNT(*) AS n FROM outbox WHERE channel = ? AND status = 'sent' AND source = 'notice'`)
    .get(channel) as { n: number };
  return groups.n + notices.n;
}

/** The `app` label (or, for alerts without one, the `server` label) of every event's alert. */
export function eventSubjects(
  db: Pick<SqlDatabase, 'prepare'>,
): { id: number; kind: string; subject: string | null }[] {
  const rows = db
    .prepare(`SELECT e.id, e.kind, a.labels FROM events e JOIN alerts a ON a.fingerprint = e.fingerprint ORDER BY e.id`)
    .all() as { id: number; kind: string; labels: string }[];
  return rows.map((r) => {
    const labels = JSON.parse(r.labels) as Record<string, string>;
    return { id: r.id, kind: r.kind, subject: labels.app ?? labels.server ?? null };
  });
}

/**
 * Writes the config file of a `deploy-watchdog run` child: the simulator's API, a state file
 * beside the config, `lines` (jobs, notify, …), no listener, JSON logs. Answers its path.
 */
export function writeRunConfig(dir: string, sim: RunningSimulator, lines: readonly string[]): string {
  const file = path.join(dir, 'watchdog.yaml');
  const head = ['api:', `  base_url: ${sim.baseUrl}`, '  token: ${DMS_API_TOKEN}', '  requests_per_second: 500'];
  const tail = ['server: { listen: "off" }', 'log: { level: info, format: json }', ''];
  fs.writeFileSync(file, [...head, 'state: { path: ./state.db }', ...lines, ...tail].join('\n'));
  return file;
}

/** A `deploy-watchdog run` child and how it ended. */
export interface RunChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/** `deploy-watchdog run` children of one test: their output kept together, those still running killed at the end. */
export class RunChildren {
  output = '';
  readonly #children = new Set<ChildProcess>();

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /** Starts `run` on a config file, with a 5 s stop timeout. */
  start(config: string): RunChild {
    const root = path.resolve(import.meta.dirname, '../..');
    const bin = path.join(root, 'src/cli/bin.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', bin, 'run', '--config', config, '--stop-timeout', '5s'], {
      cwd: root,
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, exited };
  }

  /** Kills (SIGKILL) every child still running. */
  killAll(): void {
    for (const c of this.#children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    this.#children.clear();
  }
}
