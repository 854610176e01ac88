/** Shared set-up of the engine tests: a simulator on loopback, a temp state dir, a config, captured logs. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach } from 'vitest';
import { createLogger, type Logger } from '../../src/lib/logger.js';
import { Watchdog, type WatchdogOptions } from '../../src/app/watchdog.js';
import { parseConfig, type Config } from '../../src/config/load-config.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../packages/simulator/src/index.js';

export const MINUTE = 60_000;

/** A temp directory removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-engine-'));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A simulator driven by a ManualClock that the engine shares. */
export async function manualSim(
  options: SimulatorOptions = {},
): Promise<{ sim: RunningSimulator; clock: ManualClock }> {
  const clock = new ManualClock();
  const sim = await startSimulator({ apps: 20, ...options, clock });
  return { sim, clock };
}

/**
 * The engine's test config: the simulator, a state file in `dir`, no retries (a retry would wait on
 * the manual clock), a generous rate limit, a log channel, no listener (unless `server`, the
 * section's YAML in flow style, says otherwise). `extra` is YAML appended (top-level sections not
 * already present). `env` adds variables for `${VAR}` in `extra` and `server`.
 */
export function engineConfig(
  sim: RunningSimulator,
  dir: string,
  extra = '',
  token = sim.adminToken,
  notify = ['notify:', '  channels: [{ name: console, type: log }]', '  routes: [{ channels: [console] }]'].join('\n'),
  server = '{ listen: "off" }',
  env: Record<string, string> = {},
): Config {
  const text = [
    'api:',
    '  base_url: ${SIM_URL}',
    '  token: ${DMS_API_TOKEN}',
    '  requests_per_second: 1000',
    '  max_retries: 0',
    '  timeout: 5s',
    '  page_size: 50',
    'state:',
    '  path: ./state.db',
    notify,
    `server: ${server}`,
    extra,
  ].join('\n');
  return parseConfig(text, { ...env, SIM_URL: sim.baseUrl, DMS_API_TOKEN: token }, 'test.yaml', { baseDir: dir });
}

/** A logger writing JSON lines into memory. */
export function captureLogger(level = 'debug'): { logger: Logger; text(): string; lines(): Record<string, unknown>[] } {
  let out = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const logger = createLogger({ level, format: 'json', destination: stream });
  return {
    logger,
    text: () => out,
    lines: () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** Opens a Watchdog on the test config. */
export function openWatchdog(config: Config, clock: ManualClock, extra: Partial<WatchdogOptions> = {}): Watchdog {
  return Watchdog.open({ config, clock, logger: captureLogger('silent').logger, metrics: undefined, ...extra });
}

/** The alert events written for fingerprints starting with `prefix`, oldest first. */
export function eventsOf(wd: Watchdog, prefix: string): { kind: string; fingerprint: string }[] {
  return wd.store.db
    .prepare(`SELECT kind, fingerprint FROM events WHERE fingerprint LIKE ? || '%' ORDER BY id`)
    .all(prefix) as { kind: string; fingerprint: string }[];
}

/**
 * The usual engine test set-up, registered with vitest's hooks: before each test a simulator on a
 * ManualClock and a temp dir; after it, every Watchdog opened with `watchdog()` (and not `closed`
 * by the test) stopped, the simulator closed and the dir removed. Read the fields inside tests.
 */
export function engineHarness(options: SimulatorOptions = {}) {
  let current: { sim: RunningSimulator; clock: ManualClock; tmp: ReturnType<typeof tempDir> } | undefined;
  const opened: Watchdog[] = [];
  const now = () => {
    if (!current) throw new Error('engineHarness: read it inside a test');
    return current;
  };
  beforeEach(async () => {
    current = { ...(await manualSim(options)), tmp: tempDir() };
  });
  afterEach(async () => {
    for (const wd of opened.splice(0)) await wd.stop(1_000);
    await current?.sim.close();
    current?.tmp.cleanup();
    current = undefined;
  });
  return {
    get sim(): RunningSimulator {
      return now().sim;
    },
    get clock(): ManualClock {
      return now().clock;
    },
    get dir(): string {
      return now().tmp.dir;
    },
    /** The engine's test config (see {@link engineConfig}) with `extra` YAML. */
    config(extra = ''): Config {
      return engineConfig(now().sim, now().tmp.dir, extra);
    },
    /** Opens a Watchdog on {@link config}; stopped after the test. */
    watchdog(extra = '', more: Partial<WatchdogOptions> = {}): Watchdog {
      const wd = openWatchdog(engineConfig(now().sim, now().tmp.dir, extra), now().clock, more);
      opened.push(wd);
      return wd;
    },
    /** Stops a Watchdog of {@link watchdog} now (a restart in the test). */
    async close(wd: Watchdog): Promise<void> {
      opened.splice(opened.indexOf(wd), 1);
      await wd.stop(1_000);
    },
  };
}

/** Why the alert `fingerprint` is over, as its newest resolved event says (undefined: none, or no reason). */
export function resolutionOf(wd: Watchdog, fingerprint: string): string | undefined {
  const row = wd.store.db
    .prepare(`SELECT payload FROM events WHERE fingerprint = ? AND kind = 'resolved' ORDER BY id DESC`)
    .get(fingerprint) as { payload: string } | undefined;
  return row ? ((JSON.parse(row.payload) as { resolution?: string }).resolution ?? undefined) : undefined;
}
