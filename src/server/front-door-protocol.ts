/**
 * What the main thread and the front door (`front-door-worker.ts`, the listener's own thread) say
 * to each other, and the shared memory between them. Nothing here runs: both sides import it, the
 * worker nothing else of the daemon, so it starts quickly and holds no state of the daemon's.
 */
import type { ReadinessCheck } from './readiness-check.js';

/**
 * What one client may hold of the listener, so a slow one (a slowloris that sends its headers or
 * its body a byte at a time) cannot take every file descriptor and darken the probes: a request
 * must arrive whole within seconds, an idle connection is closed soon, and the connections are
 * capped in all and per client address; at the cap, the connection that waited longest without a
 * whole request makes room for a new one (`connection-guard.ts`), so a probe always finds a place.
 */
export const LISTENER_LIMITS = {
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
} as const;

/** What one client may hold of the listener, by name: the values are {@link LISTENER_LIMITS}. */
export type ListenerLimits = { [K in keyof typeof LISTENER_LIMITS]: number };

/** The slots of {@link FrontDoorData.shared} (a BigInt64Array on a SharedArrayBuffer). */
export const SHARED = {
  /** Date.now() of the main thread's last heartbeat: its event loop turned then. */
  heartbeat: 0,
  /** How many `/readyz` the front door answered: the main thread judges readiness again when it rose. */
  readyAsks: 1,
  /**
   * The daemon's clock less Date.now() (ms): 0 on the system clock, a test's ManualClock's lead
   * otherwise. A Slack request's timestamp is judged against the daemon's time, as it always was.
   */
  clockOffset: 2,
} as const;
/** The number of slots of {@link SHARED}. */
export const SHARED_SLOTS = 3;

/**
 * The header the front door adds to a request it relays to the main thread: its relay token and
 * the client's real address and port. The main thread's listener believes no request without the
 * token, and the front door drops the header from what a client sends.
 */
export const RELAY_HEADER = 'x-deploy-watchdog-relay';

/** The listener's own paths, answered by the front door: never relayed, never the console's. */
export const HEALTH_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** What the main thread publishes; each part absent when unchanged since the last. */
export interface Publication {
  alive?: boolean;
  /** The role of a replica, as `/readyz` says it. */
  role?: { role: 'leader' | 'follower'; epoch: number | null } | null;
  /** The `leader` check as it is now (it costs no statement), replacing the one of the last judgement. */
  leader?: ReadinessCheck | null;
  readiness?: ReadinessCheck[];
  /** Date.now() when `readiness` was judged (sent with it). */
  readinessAt?: number;
  /**
   * The signing secrets of the Slack apps that take clicks over HTTP, in the config in force (none:
   * `/slack/interactions` is not found), numbered: a click verified with them names the generation
   * and the index of the secret, and the main thread finds its app by them.
   */
  signing?: { generation: number; secrets: string[] };
  metrics?: { text: string; contentType: string; at: number };
  /** Where the console's own thread listens, and its token (null: not served there; relayed to the main thread). */
  console?: RelayTarget | null;
}

/** A listener on a unix socket the front door relays to, and the token it wants in {@link RELAY_HEADER}. */
export interface RelayTarget {
  socketPath: string;
  token: string;
}

/** What the front door is started with (`workerData`). */
export interface FrontDoorData {
  host: string;
  port: number;
  limits: ListenerLimits;
  /** See {@link SHARED}. */
  shared: BigInt64Array;
  /** `/healthz` fails once the heartbeat is older than this (ms). */
  stallAfterMs: number;
  /** Where the main thread's own listener is (a unix socket in a private directory), and the token it wants. */
  relay: RelayTarget;
  /** The first publication, whole: the front door answers from the first request on. */
  first: Publication;
}

/** What the main thread tells the front door, beside `end` (`ThreadEnd`: stop listening). */
export type ToFrontDoor = { type: 'publish'; publication: Publication };

/** What the front door tells the main thread, beside what every thread says (`ThreadSays`). */
export type FromFrontDoor =
  /** It listens, there. */
  | { type: 'ready'; host: string; port: number }
  /** A Slack click over HTTP, verified (signature, timestamp, never seen before) and already answered 200. */
  | { type: 'interaction'; payload: unknown; generation: number; index: number };
