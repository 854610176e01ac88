/**
 * The daemon's one small HTTP listener: `/healthz` (alive), `/readyz` (doing its job) and
 * `/metrics` (Prometheus text). It reads state through {@link HealthSource}; it decides nothing.
 * `/slack/interactions` takes Slack's posts of button clicks, when a Slack app channel wants them
 * over HTTP (`src/interactions/slack-http-receiver.ts`, run by the front door, which answers Slack
 * at once and hands the click over: {@link InteractionsTaker}); `/pagerduty/<channel>` and
 * `/opsgenie/<channel>` the on-call tools' webhooks (`src/interactions/on-call-webhook.ts`). Every
 * other path is the web console's, when one is given (`src/console/console-handler.ts`).
 *
 * The listener runs on a thread of its own, the front door (`front-door-worker.ts`), because the
 * main thread blocks while a PostgreSQL statement runs: the main thread publishes what the probes
 * and `/metrics` answer ({@link FrontDoor}) and beats a heartbeat in shared memory; Slack's
 * clicks are verified and answered there, and handed over; every other path is relayed to the handlers here, on a unix socket in a private directory
 * (docs/architecture.md, "The front door").
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parseListen } from '../config/parse-listen.js';
import type { Secret } from '../lib/secret.js';
import type { InteractionsTaker } from '../interactions/slack-http-receiver.js';
import type { Clock } from '../lib/clock.js';
import { answerJson } from '../lib/answer-json.js';
import { sameText } from '../lib/same-text.js';
import type { Logger } from '../lib/logger.js';
import { SupervisedThread } from '../lib/supervised-thread.js';
import { HEALTH_PATHS, LISTENER_LIMITS, RELAY_HEADER, SHARED, SHARED_SLOTS } from './front-door-protocol.js';
import type {
  FromFrontDoor,
  FrontDoorData,
  ListenerLimits,
  Publication,
  RelayTarget,
  ToFrontDoor,
} from './front-door-protocol.js';
import type { Metrics } from '../lib/metrics.js';
import type { ReadinessCheck } from './readiness-check.js';
import type { WriteFence } from '../state/write-fence.js';
import { privateRelay } from './private-relay.js';

/**
 * Answers one request the listener does not answer itself (true), or leaves it to the listener's
 * own 404 (false). Declared here, where it is called, so the handlers depend on the listener and
 * not the other way round.
 */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** What the listener asks the running daemon. */
export interface HealthSource {
  /** True while the scheduler is running. */
  alive(): boolean;
  /** Every condition of readiness, passing or not; never throws (a judgement that fails is a failed check). */
  readiness(): ReadinessCheck[];
  /**
   * Which replica this is, when replicas share a PostgreSQL state: `/readyz` says it beside the
   * checks (a follower is ready too: it serves the console). Absent: one process, no roles.
   * `reached` and `detail`, when given, are the `leader` check of readiness, which costs no
   * statement: the front door answers it as it is now, not as readiness was last judged.
   */
  role?(): (NonNullable<Publication['role']> & { reached?: boolean; detail?: string; fence?: WriteFence }) | undefined;
}

/**
 * How long the main thread may go without a heartbeat before `/healthz` fails, when the caller
 * says nothing (src/app/health-listener.ts derives it from the longest a statement may block).
 */
export const DEFAULT_STALL_AFTER_MS = 30_000;
/** How often the main thread beats, and looks whether its role or liveness changed. */
const HEARTBEAT_MS = 100;
/** How often `/metrics`' exposition is rendered again; what it answers is at most about this old. */
export const METRICS_EVERY_MS = 1_000;
/** Readiness is judged again at most this often (it writes the state); see {@link FrontDoor}. */
const READINESS_EVERY_MS = 1_000;
/** How long after a `/readyz` readiness is kept fresh (the kubelet asks every 10 s by default). */
const WATCHED_MS = 60_000;

/** A running health listener: what of the {@link FrontDoor} the main thread uses. */
export type HealthServer = Pick<FrontDoor, 'address' | 'beat' | 'close'>;

/** What {@link startHealthServer} serves, and how. */
export interface HealthServerOptions {
  listen: string;
  source: HealthSource;
  metrics: Metrics;
  logger: Logger;
  /** The web console, answering every other path (it declines when the config switches it off). */
  console?: RequestHandler | undefined;
  /** The console's own thread, where the front door relays the console's paths while it listens. */
  consoleRelay?: (() => RelayTarget | undefined) | undefined;
  /** Slack's posts of button clicks at `/slack/interactions`; absent, or no secrets: not found. */
  interactions?: (() => InteractionsTaker | undefined) | undefined;
  /** The daemon's clock, which a Slack request's timestamp is judged against; default the system's. */
  clock?: Clock | undefined;
  /** The on-call tools' webhooks (`/pagerduty/…`, `/opsgenie/…`); false when the path is not theirs. */
  webhooks?: RequestHandler | undefined;
  /** Other limits than {@link LISTENER_LIMITS} (tests: timeouts of a second or two). */
  limits?: Partial<ListenerLimits> | undefined;
  /** `/healthz` fails once the main thread has not turned for this long (ms); default {@link DEFAULT_STALL_AFTER_MS}. */
  stallAfterMs?: number | undefined;
}

/** Starts the listener; resolves once it is bound. */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const door = new FrontDoor(options);
  try {
    await door.start();
  } catch (err) {
    await door.close();
    throw err;
  }
  const { host, port } = door.address;
  options.logger.info({ address: `${host}:${port}` }, 'health and metrics listener started');
  return door;
}

/**
 * The main thread's listener, on the unix socket: what the front door relays (the console,
 * Slack's posts), answered by the handlers as they always were, each request seen from the
 * client's real address (never the relay's).
 */
function innerServer(options: HealthServerOptions, token: string): Server {
  return createServer((req, res) => {
    if (!fromFrontDoor(req, res, token)) return;
    if (options.webhooks?.(req, res)) return;
    if (options.console?.(req, res)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    answerJson(res, 404, { error: 'not found', paths: HEALTH_PATHS });
  });
}

/**
 * Whether the request came through the front door (its relay header bears this listener's
 * token): if so the header is taken off and the connection made to say the client's address; if
 * not it is answered 403.
 */
export function fromFrontDoor(req: IncomingMessage, res: ServerResponse, token: string): boolean {
  const header = req.headers[RELAY_HEADER];
  const [given = '', port = '0', ...address] = typeof header === 'string' ? header.split(' ') : [];
  if (!sameText(given, token)) {
    res.writeHead(403).end();
    return false;
  }
  delete req.headers[RELAY_HEADER];
  for (let i = req.rawHeaders.length - 2; i >= 0; i -= 2) {
    if (req.rawHeaders[i]!.toLowerCase() === RELAY_HEADER) req.rawHeaders.splice(i, 2);
  }
  // One connection carries one relayed request (the front door pools none), so this is its client's.
  const remote = address.join(' ') || undefined;
  Object.defineProperties(req.socket, {
    remoteAddress: { value: remote, configurable: true },
    remotePort: { value: Number(port) || undefined, configurable: true },
    remoteFamily: {
      value: remote === undefined ? undefined : remote.includes(':') ? 'IPv6' : 'IPv4',
      configurable: true,
    },
  });
  return true;
}

/**
 * The front door from the main thread: its thread, and what the main thread publishes for it: a
 * heartbeat every {@link HEARTBEAT_MS} (its event loop turned), liveness and role when they
 * change, and the metrics' exposition every {@link METRICS_EVERY_MS}. Readiness reads and writes
 * the state, so it is judged only while someone looks: every {@link READINESS_EVERY_MS} while
 * `/readyz` was asked within {@link WATCHED_MS} (a kubelet probing every 10 s keeps it so), never
 * taking more than a tenth of the main thread (a PostgreSQL that hangs makes one judgement last up
 * to its limit of 2 s). A daemon nobody asks `/readyz` of does no more work on its state than before.
 */
class FrontDoor {
  /** The address actually bound (port 0 resolves to a free port). */
  address = { host: '', port: 0 };
  readonly #shared = new BigInt64Array(new SharedArrayBuffer(8 * SHARED_SLOTS));
  /** The main thread's own listener, where the front door relays what it does not answer. */
  readonly #relay = privateRelay('dw-listener-', 'main.sock');
  readonly #inner: Server;
  readonly #thread: SupervisedThread<ToFrontDoor, FromFrontDoor>;
  /** What the thread is started with. */
  #data: FrontDoorData | undefined;
  #timers: NodeJS.Timeout[] = [];
  #unjump: (() => void) | undefined;
  #said: { alive: boolean; role: string } | undefined;
  /** The signing secrets published, by generation: the last two (a click verified just before a reload is still found). */
  #signing: { generation: number; secrets: readonly Secret[] }[] = [];
  #asksSeen = 0n;
  #watchedUntil = 0;
  #readinessNext = 0;
  #rendering = false;

  constructor(private readonly options: HealthServerOptions) {
    this.#inner = innerServer(options, this.#relay.token);
    this.beat();
    this.#unjump = options.clock?.onJump?.(() => this.beat());
    this.#thread = new SupervisedThread<ToFrontDoor, FromFrontDoor>(
      {
        module: 'front-door-worker',
        base: import.meta.url,
        data: () => ({ frontDoor: this.#data }),
        name: 'the listener thread',
        down: '/healthz and the console are not answered',
        heard: (m) => this.#interaction(m),
      },
      options.logger,
    );
  }

  /** Starts the thread with everything published; resolves once it listens, rejects with why it cannot (the port taken, ...). */
  async start(): Promise<void> {
    // `once` rejects with the first 'error' instead (the socket's directory gone, ...).
    await once(this.#inner.listen(this.#relay.socketPath), 'listening');
    const { options } = this;
    this.#data = {
      ...parseListen(options.listen),
      limits: { ...LISTENER_LIMITS, ...options.limits },
      shared: this.#shared,
      stallAfterMs: options.stallAfterMs ?? DEFAULT_STALL_AFTER_MS,
      relay: { socketPath: this.#relay.socketPath, token: this.#relay.token },
      first: await this.#judged(true),
    };
    const { host, port } = await this.#thread.start();
    this.address = { host, port };
    this.#timers = [
      setInterval(() => this.#tick(), HEARTBEAT_MS),
      setInterval(() => {
        void this.#render().then((metrics) => metrics && this.#publish({ metrics }));
      }, METRICS_EVERY_MS),
    ];
    for (const t of this.#timers) t.unref();
  }

  /** Stops publishing, and listening (its connections closed): the thread ends in at most `THREAD_END_WAIT_MS` (2 s). */
  async close(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#unjump?.();
    await this.#thread.end();
    if (this.#inner.listening) {
      const closed = once(this.#inner, 'close');
      this.#inner.close().closeAllConnections();
      await closed;
    }
    this.#relay.remove();
  }

  /** Sends a publication to the front door. */
  #publish(publication: Publication): void {
    this.#thread.post({ type: 'publish', publication });
  }

  /**
   * Readiness judged now, then what changed since last said (everything, when `all`), so the role
   * said beside the judgement is the one it left, and the exposition rendered after the judgement,
   * so what /readyz says (a cycle completed) /metrics says too. Only the tick's render goes on
   * while another is under way.
   */
  async #judged(all: boolean): Promise<Publication> {
    const readiness = this.#readiness();
    const readinessAt = Date.now();
    // The role after the judgement: one whose write found the term over answers as a follower.
    const changed = { ...this.#changed(all), ...this.#signingChanged(all) };
    const metrics = await this.#render(!all);
    return { ...changed, readiness, readinessAt, ...(metrics && { metrics }) };
  }

  /** A click the front door verified with the secrets of `generation`: handed to the config in force. */
  #interaction(m: { payload: unknown; generation: number; index: number }): void {
    const secret = this.#signing.find((g) => g.generation === m.generation)?.secrets[m.index];
    if (!secret) {
      this.options.logger.warn('a Slack click came verified with signing secrets no longer configured; nothing done');
      return;
    }
    this.options.interactions?.()?.take(m.payload, secret);
  }

  /**
   * Beats the heartbeat from inside a long synchronous stretch that makes progress (a long
   * transaction's waits: `WaitLimit.keepUp`), where the event loop's own beat cannot run.
   */
  beat(): void {
    const now = Date.now();
    Atomics.store(this.#shared, SHARED.heartbeat, BigInt(now));
    if (this.options.clock)
      Atomics.store(this.#shared, SHARED.clockOffset, BigInt(Math.round(this.options.clock.now() - now)));
  }

  #tick(): void {
    this.beat();
    const now = Date.now();
    const asks = Atomics.load(this.#shared, SHARED.readyAsks);
    if (asks !== this.#asksSeen) {
      this.#asksSeen = asks;
      this.#watchedUntil = now + WATCHED_MS;
    }
    if (now < this.#watchedUntil && now >= this.#readinessNext) {
      void this.#judged(false).then((publication) => this.#publish(publication));
      return;
    }
    const changed = { ...this.#changed(false), ...this.#signingChanged(false) };
    if (Object.keys(changed).length > 0) this.#publish(changed);
  }

  /** The signing secrets of the config in force, when they changed since last published (or always, when `all`). */
  #signingChanged(all: boolean): Pick<Publication, 'signing'> | undefined {
    const secrets = this.options.interactions?.()?.secrets ?? [];
    const last = this.#signing.at(-1);
    const same = last && last.secrets.length === secrets.length && last.secrets.every((s, i) => s === secrets[i]);
    if (same && !all) return undefined;
    // The same secrets keep their generation: a click verified with them is still found.
    const generation = same ? last.generation : (last?.generation ?? 0) + 1;
    if (!same) this.#signing = [...this.#signing.slice(-1), { generation, secrets: [...secrets] }];
    return { signing: { generation, secrets: secrets.map((s) => s.reveal()) } };
  }

  /** Liveness, role and where the console listens, when they changed since last said (or always, when `all`). */
  #changed(all: boolean): Pick<Publication, 'alive' | 'role' | 'leader' | 'console'> | undefined {
    const alive = this.options.source.alive();
    const status = this.options.source.role?.();
    const role = status ? { role: status.role, epoch: status.epoch } : null;
    const leader =
      status?.reached === undefined ? null : { check: 'leader', ok: status.reached, detail: status.detail ?? '' };
    const console = this.options.consoleRelay?.() ?? null;
    const now = { alive, role: JSON.stringify([role, leader, console]) };
    if (!all && this.#said?.alive === now.alive && this.#said.role === now.role) return undefined;
    this.#said = now;
    return { alive, role, leader, console };
  }

  #readiness(): Publication['readiness'] {
    const started = performance.now();
    const readiness = this.options.source.readiness();
    this.#readinessNext = Date.now() + Math.max(READINESS_EVERY_MS, 10 * (performance.now() - started));
    return readiness;
  }

  /** The exposition now; undefined when it fails, or (unless `always`) while another is under way. */
  async #render(always = false): Promise<Publication['metrics']> {
    if (this.#rendering && !always) return undefined;
    this.#rendering = true;
    try {
      const text = await this.options.metrics.render();
      return { text, contentType: this.options.metrics.registry.contentType, at: Date.now() };
    } catch (err) {
      this.options.logger.error({ err }, 'cannot render metrics');
      return undefined;
    } finally {
      this.#rendering = false;
    }
  }
}
