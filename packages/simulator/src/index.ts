/**
 * The fake Deployment Management Service: `startSimulator()` seeds a realistic service and serves
 * it over HTTP on loopback, with a control interface for time, faults and scenarios.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { silentLogger } from '../../../src/lib/logger.js';
import { systemClock, type Clock } from '../../../src/lib/clock.js';
import { HttpHandler } from './http-handler.js';
import type { RateLimitSpec } from './rate-limiter.js';
import { checkMaxLimit } from './request-params.js';
import { SimulatorControl } from './simulator-control.js';
import { SimulatorCore } from './simulator-core.js';
import { STATE_WORD_SETS, type StateWordSet } from './state-words.js';
import { checkTimeFormat, type TimeFormat } from './time-format.js';
import { checkListGrading, type ListGrading } from './read-handlers.js';
import type { SimTokenSpec } from './token-grants.js';
import type { BackupOutcome } from './backup-outcome.js';

/** How to start a simulator. */
export interface SimulatorOptions {
  /** Number of apps; default 20; 1 to 10,000. */
  apps?: number;
  /** Default 1; the same seed and app count (and start time) give the same data. */
  seed?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (ephemeral). */
  port?: number;
  /** Default the system clock; simulator time is clock.now() plus what advance() added. */
  clock?: Clock;
  /** Default 'sim-admin-token': every permission, namespace and environment. */
  adminToken?: string;
  /** Extra tokens; each may be limited to namespaces, permissions and the environments it reads and changes. */
  tokens?: SimTokenSpec[];
  /** Largest accepted `limit`; default 1000 (above: 400 invalid_parameter naming it; logs.tail accepts at least its default 200). */
  maxLimit?: number;
  /** How timestamps are written; default 'iso' (`2026-11-24T08:00:00.000Z`). See time-format.ts. */
  timeFormat?: TimeFormat;
  /** A token bucket per bearer token (429 rate_limited beyond it); default none. */
  rateLimit?: RateLimitSpec;
  /** The words of `state` fields: 'default' (VOCABULARY) or 'alt' (ALT_VOCABULARY); see state-words.ts. */
  stateWords?: StateWordSet;
  /**
   * Whether lists are graded by the environments a token may read: 'environment' (default: lists
   * show only what reads by id give) or 'none' (only reads by id are graded, as the reference
   * states: a list names records `get` refuses with access_denied). See read-handlers.ts.
   */
  listGrading?: ListGrading;
  /** How backups end after their run is done (default verified and copied off-site at once); see backup-outcome.ts. */
  backupOutcome?: Partial<BackupOutcome>;
  logger?: Logger;
}

/** A simulator serving on loopback. */
export interface RunningSimulator {
  /** e.g. http://127.0.0.1:41234; the API root is baseUrl + '/api/v1'. */
  baseUrl: string;
  adminToken: string;
  control: SimulatorControl;
  /** Closes the server and every open connection, hanging ones included. */
  close(): Promise<void>;
}

/** The admin token when none is given. */
export const DEFAULT_ADMIN_TOKEN = 'sim-admin-token';

/** Seeds a simulator and starts serving it. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const apps = options.apps ?? 20;
  if (options.stateWords !== undefined && !STATE_WORD_SETS.includes(options.stateWords)) {
    throw new Error(
      `stateWords must be one of ${STATE_WORD_SETS.join(', ')}, got ${JSON.stringify(options.stateWords)}`,
    );
  }
  if (!Number.isInteger(apps) || apps < 1 || apps > 10_000)
    throw new Error(`apps must be an integer from 1 to 10000, got ${String(apps)}`);
  const adminToken = options.adminToken ?? DEFAULT_ADMIN_TOKEN;
  const logger = options.logger ?? silentLogger;
  const core = new SimulatorCore({
    apps,
    seed: options.seed ?? 1,
    clock: options.clock ?? systemClock,
    adminToken,
    tokens: options.tokens ?? [],
    maxLimit: checkMaxLimit(options.maxLimit ?? 1000),
    timeFormat: checkTimeFormat(options.timeFormat ?? 'iso'),
    rateLimit: options.rateLimit ?? null,
    stateWords: options.stateWords ?? 'default',
    listGrading: checkListGrading(options.listGrading ?? 'environment'),
    logger,
  });
  const control = new SimulatorControl(core);
  if (options.backupOutcome) control.checks.backups.setOutcome(options.backupOutcome);
  const handler = new HttpHandler(core, control);
  const server = createServer(handler.listener);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const baseUrl = `http://${host}:${address.port}`;
  logger.info({ baseUrl, apps }, 'simulator listening');
  let closing: Promise<void> | null = null;
  return {
    baseUrl,
    adminToken,
    control,
    close() {
      closing ??= new Promise<void>((resolve) => {
        handler.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
