/**
 * What the tests of `deploy-watchdog run` as a child process share: the config file they write
 * (the simulator, a state file beside it, JSON logs) and the way they spawn and wait on the daemon.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { binArgs } from '../helpers/test-build.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The sections a test changes; the rest is the same for every daemon test. */
export interface DaemonConfigParts {
  /** The `state:` value; `{ path: ./state.db }` (beside the config file) by default. */
  state?: string;
  /** The `jobs:` value, e.g. `{ runs: "*\/30 * * * * *", maintenance: "off", jitter: 0s }`. */
  jobs: string;
  /** Lines under `notify:` (indented two spaces). */
  notify: string[];
  /** The `server:` value. */
  server: string;
}

/** The YAML of a daemon config reading the simulator, with the token from $DMS_API_TOKEN. */
export function daemonConfigYaml(sim: RunningSimulator, parts: DaemonConfigParts): string {
  return [
    'api:',
    `  base_url: ${sim.baseUrl}`,
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 200',
    `state: ${parts.state ?? '{ path: ./state.db }'}`,
    `jobs: ${parts.jobs}`,
    'notify:',
    ...parts.notify.map((l) => `  ${l}`),
    `server: ${parts.server}`,
    'log: { level: info, format: json }',
    '',
  ].join('\n');
}

/** `notify` lines of a daemon whose only channel is its own log (`DaemonConfigParts.notify`). */
export const LOG_CHANNEL_NOTIFY = ['channels: [{ name: console, type: log }]', 'routes: [{ channels: [console] }]'];

/** A running `deploy-watchdog run`: its process, its exit (code, or signal name), its output so far. */
export interface Daemon {
  child: ChildProcess;
  exited: Promise<number | string | null>;
  output(): string;
}

/** Spawns `deploy-watchdog run --config FILE` with the simulator's admin token (and `env`) in its environment. */
export function spawnDaemon(
  sim: RunningSimulator,
  configFile: string,
  stopTimeout = '5s',
  env: NodeJS.ProcessEnv = {},
): Daemon {
  let out = '';
  const child = spawn(process.execPath, binArgs(['run', '--config', configFile, '--stop-timeout', stopTimeout]), {
    cwd: ROOT,
    env: { ...process.env, DMS_API_TOKEN: sim.adminToken, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  );
  return { child, exited, output: () => out };
}

/** Polls until `check` holds, in small steps, failing after `ms` with `context()` in the message. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  context: () => string,
  ms = 30_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; daemon output:\n${context()}`);
}

/** The HTTP status of a GET of `url`; 0 when nothing answers. */
export async function status(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}
