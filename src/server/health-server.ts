/**
 * The daemon's one small HTTP listener: `/healthz` (alive), `/readyz` (doing its job) and
 * `/metrics` (Prometheus text). It reads state through {@link HealthSource}; it decides nothing.
 * `/slack/interactions` takes Slack's posts of button clicks, when a Slack app channel wants them
 * over HTTP (`src/interactions/slack-http-receiver.ts`). Every other path is the web console's,
 * when one is given (`src/console/console-handler.ts`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { INTERACTIONS_PATH } from '../interactions/slack-http-receiver.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from './metrics.js';

/**
 * Answers one request the listener does not answer itself (true), or leaves it to the listener's
 * own 404 (false). Declared here, where it is called, so the handlers depend on the listener and
 * not the other way round.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** One reason the daemon is not ready, e.g. `{ check: 'job:runs', ok: false, detail: 'no completed cycle for 4m' }`. */
export interface ReadinessCheck {
  check: string;
  ok: boolean;
  detail: string;
}

/** What the listener asks the running daemon. */
export interface HealthSource {
  /** True while the scheduler is running. */
  alive(): boolean;
  /** Every condition of readiness, passing or not. */
  readiness(): ReadinessCheck[];
  /**
   * Which replica this is, when replicas share a PostgreSQL state: `/readyz` says it beside the
   * checks (a follower is ready too: it serves the console). Absent: one process, no roles.
   */
  role?(): { role: 'leader' | 'follower'; epoch: number | null } | undefined;
}

/** Where to listen: `127.0.0.1:9464`, `[::1]:9464`, `:9464` (all interfaces). */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listen.trim());
  if (!m) throw new Error(`listen address must be HOST:PORT, got "${listen}"`);
  const port = Number(m[3]);
  if (port > 65_535) throw new Error(`listen port must be at most 65535, got ${port}`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/**
 * What one client may hold of the listener, so a slow one (a slowloris that sends its headers or
 * its body a byte at a time) cannot take every file descriptor and darken the probes: a request
 * must arrive whole within seconds, an idle connection is closed soon, and the connections are
 * capped in all and per client address (a probe comes from another address than an attacker, or
 * finds a place as the attacker's time runs out).
 */
export const LISTENER_LIMITS: Readonly<ListenerLimits> = {
  /** Headers must arrive within this long (ms). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included, within this long (ms): Slack's posts and the console's forms are small. */
  requestTimeoutMs: 15_000,
  /** An idle kept-alive connection is closed after this long (ms). */
  keepAliveTimeoutMs: 5_000,
  /** How often the timeouts above are checked (ms); Node's default of 30 s would let them run long. */
  checkIntervalMs: 1_000,
  /** Connections open at once, in all. */
  maxConnections: 512,
  /** Connections open at once from one client address. */
  maxConnectionsPerClient: 32,
};

/** The limits of {@link LISTENER_LIMITS}, by name. */
export interface ListenerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  checkIntervalMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
}

/** The listener's own paths; the console never answers them. */
const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** A running health listener. */
export interface HealthServer {
  /** The address actually bound (port 0 resolves to a free port). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/** Starts the listener; resolves once it is bound. */
export async function startHealthServer(options: {
  listen: string;
  source: HealthSource;
  metrics: Metrics;
  logger: Logger;
  /** The web console, answering every other path (it declines when the config switches it off). */
  console?: RequestHandler | undefined;
  /**
   * Slack's posts of button clicks at {@link INTERACTIONS_PATH}; true when it answered, false when
   * no channel takes them (then the path is not found).
   */
  interactions?: RequestHandler | undefined;
  /** Other limits than {@link LISTENER_LIMITS} (tests: timeouts of a second or two). */
  limits?: Partial<ListenerLimits> | undefined;
}): Promise<HealthServer> {
  const { source, metrics, logger } = options;
  const limits = { ...LISTENER_LIMITS, ...options.limits };
  const server: Server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path === INTERACTIONS_PATH) {
        if (!options.interactions?.(req, res)) {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found' }));
        }
        return;
      }
      if (!HEALTH_PATHS.includes(path) && options.console?.(req, res)) return;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (path === '/healthz') {
        const alive = source.alive();
        json(alive ? 200 : 503, { status: alive ? 'ok' : 'stopped' });
      } else if (path === '/readyz') {
        const checks = source.readiness();
        const ready = checks.every((c) => c.ok);
        json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', ...source.role?.(), checks });
      } else if (path === '/metrics') {
        metrics
          .render()
          .then((text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text))
          .catch((err: unknown) => {
            logger.error({ err }, 'cannot render metrics');
            res.writeHead(500).end();
          });
      } else {
        json(404, { error: 'not found', paths: HEALTH_PATHS });
      }
    },
  );
  server.maxConnections = limits.maxConnections;
  limitPerClient(server, limits.maxConnectionsPerClient, logger);
  const { host, port } = parseListen(options.listen);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  logger.info({ address: `${bound.address}:${bound.port}` }, 'health and metrics listener started');
  return {
    address: { host: bound.address, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Closes a new connection from a client address that already holds `max`, and says so once per
 * address while it goes on (not per connection: a flood would flood the log too).
 */
function limitPerClient(server: Server, max: number, logger: Logger): void {
  const open = new Map<string, number>();
  const refused = new Set<string>();
  server.on('connection', (socket) => {
    const client = socket.remoteAddress ?? 'unknown';
    const count = open.get(client) ?? 0;
    if (count >= max) {
      if (!refused.has(client)) {
        refused.add(client);
        logger.warn({ client, max }, `a client holds ${max} connections to the listener; closing its new ones`);
      }
      socket.destroy();
      return;
    }
    open.set(client, count + 1);
    socket.once('close', () => {
      const left = (open.get(client) ?? 1) - 1;
      if (left > 0) open.set(client, left);
      else {
        open.delete(client);
        refused.delete(client);
      }
    });
  });
}
