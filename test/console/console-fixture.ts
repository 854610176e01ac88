/**
 * The console's test set-up: a real daemon (a started Watchdog reading the simulator over HTTP, on
 * a ManualClock) serving the console on a free loopback port, one cycle of every job run and
 * delivered, so alerts, events and notifications are on record; and Debian's chromium, driven by
 * playwright-core. Start both once per file: a browser takes a second to launch.
 */
import { createServer } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { request } from 'undici';
import type { ScheduleFn } from '../../src/app/scheduler.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { Logger } from '../../src/lib/logger.js';
import type { RunningSimulator, SimulatorOptions } from '../../packages/simulator/src/index.js';
import { engineConfig, manualSim, openWatchdog, tempDir } from '../app/fixtures.js';

/** A running daemon with its console. */
export interface ConsoleDaemon {
  /** `http://127.0.0.1:PORT`. */
  base: string;
  port: number;
  wd: Watchdog;
  sim: RunningSimulator;
  clock: ManualClock;
  close(): Promise<void>;
}

/** What {@link startConsoleDaemon} is given. */
export interface ConsoleDaemonOptions {
  /** The `server` section in flow style, for the port chosen; default the loopback listener alone. */
  server?: (port: number) => string;
  /** Top-level YAML appended to the engine's config. */
  extra?: string;
  /** The `notify` section (default: one log channel, one route). */
  notify?: string;
  /** Variables for `${VAR}` in `server`, `extra` and `notify`. */
  env?: Record<string, string>;
  sim?: SimulatorOptions;
  /** Before the first cycle: make the problems the test needs in the simulator. */
  prepare?: (sim: RunningSimulator) => void;
  /** The daemon's logger (default: silent). */
  logger?: Logger;
}

/** Starts a simulator and a daemon serving its console, and runs and delivers one cycle of every job. */
export async function startConsoleDaemon(options: ConsoleDaemonOptions = {}): Promise<ConsoleDaemon> {
  const { sim, clock } = await manualSim(options.sim);
  const tmp = tempDir();
  const port = await freePort();
  const config = engineConfig(
    sim,
    tmp.dir,
    options.extra,
    undefined,
    options.notify,
    options.server?.(port) ?? `{ listen: "127.0.0.1:${port}" }`,
    options.env,
  );
  options.prepare?.(sim);
  // No ticks: node-cron would run cycles on the wall clock whenever the test is slow, and a cycle
  // that lands between two pages changes the rows paged (a test seeds rows after the start).
  const schedule: ScheduleFn = () => ({ stop: async () => undefined });
  const wd = openWatchdog(config, clock, { schedule, ...(options.logger ? { logger: options.logger } : {}) });
  await wd.start();
  // start() runs a first cycle of every job in the background: wait for them, so none writes after
  // this returns (one that ended late resolved or opened alerts under a test's feet).
  await firstCyclesEnded(wd);
  await wd.runOnce();
  await wd.deliverDue();
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    wd,
    sim,
    clock,
    close: async () => {
      await wd.stop(1_000);
      await sim.close();
      tmp.cleanup();
    },
  };
}

/** Resolves once every job of a started daemon has ended a cycle (its first, run at start). */
async function firstCyclesEnded(wd: Watchdog): Promise<void> {
  // Waits for the event, bounded generously: a loaded machine takes seconds, a broken start forever.
  for (const started = Date.now(); Date.now() - started < 120_000;) {
    const { values } = await wd.metrics.cycles.get();
    const ended = new Set(values.map((v) => v.labels.source));
    if (wd.jobs.every((job) => ended.has(job))) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the first cycles did not end within 120 s');
}

/** Debian's chromium, headless (CI installs it with `.ci/run`). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
}

/** A loopback port free right now (the listener's config needs a fixed one). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A request with whatever headers (Host included), its status, headers and text. */
export async function call(
  daemon: ConsoleDaemon,
  path: string,
  options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; form?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await request(`${daemon.base}${path}`, {
    method: options.method ?? (options.form ? 'POST' : 'GET'),
    headers,
    body: options.form ? new URLSearchParams(options.form).toString() : null,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The CSRF token in a page's forms. */
export function csrfIn(page: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (!token) throw new Error('no CSRF token in the page');
  return token;
}
