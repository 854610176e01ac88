/**
 * The front door: the daemon's HTTP listener, on a thread of its own so that nothing it answers
 * waits on the main thread, which blocks while a PostgreSQL statement runs (src/state/postgres-channel.ts).
 * - `/healthz` and `/readyz` from what the main thread last published, and its heartbeat: past
 *   `stallAfterMs` without one, `/healthz` fails and says why (a main thread stuck that long is
 *   stuck for good: a restart is the cure).
 * - `/metrics` is the last exposition published (once a second).
 * - Every other path (the console, Slack's posts) is relayed to the main thread's own listener on
 *   a unix socket in a private directory, with the client's real address in {@link RELAY_HEADER}.
 * The limits of a listener (LISTENER_LIMITS: timeouts, connections in all and per client) are
 * enforced here, where the clients connect (`connection-guard.ts`: at the limit, the connection
 * that waited longest without a whole request makes room, so probes keep connecting). Started by `startHealthServer` (health-server.ts).
 */
import { EventEmitter, once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { answerJson } from '../lib/answer-json.js';
import { ConnectionGuard, type Log } from './connection-guard.js';
import { HEALTH_PATHS, RELAY_HEADER, SHARED } from './front-door-protocol.js';
import type { FromFrontDoor, FrontDoorData, Publication, RelayTarget, ToFrontDoor } from './front-door-protocol.js';
import type { ThreadEnd, ThreadSays } from '../lib/supervised-thread.js';
import { httpInteractionsHandler, INTERACTIONS_PATH } from '../interactions/slack-http-receiver.js';

/** The on-call tools' webhooks (`on-call-webhook.ts`): relayed to the main thread, never the console's. */
const ON_CALL_PATHS: readonly string[] = ['/pagerduty/', '/opsgenie/'];

/**
 * The largest body relayed: the largest any handler takes (Slack's posts, 1 MiB); past it the
 * front door answers 413 itself.
 */
const RELAY_BODY_MAX_BYTES = 1024 * 1024;

/** Headers of one hop (RFC 9110 §7.6.1), never passed on, and the relay's own. */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  RELAY_HEADER,
]);

/**
 * A readiness judgement older than this (ms) is not answered before a new one is asked for: the
 * main thread judges every second while `/readyz` is asked, so only a judgement from before a
 * quiet spell (or a blocked main thread) is older.
 */
const FRESH_MS = 2_000;
/**
 * How long `/readyz` waits for the judgement it asked for before it answers the last one: under
 * the kubelet's default probe timeout of 1 s, so a main thread that does not judge in time makes
 * an answer from the last judgement, never a probe that timed out.
 */
const JUDGEMENT_WAIT_MS = 800;

/**
 * What the front door answers from: the main thread's publications, merged (null: not given; a part
 * not published yet is absent, and the first publication is whole).
 */
type Published = Publication & Required<Pick<Publication, 'readiness' | 'readinessAt' | 'signing'>>;

/** Runs the front door (see the file's comment). */
export function frontDoor(data: FrontDoorData, port: NonNullable<typeof parentPort>): void {
  const say = (message: FromFrontDoor | ThreadSays) => port.postMessage(message);
  const log = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) =>
    say({ type: 'log', level, fields, msg });
  const state: Published = { readiness: [], readinessAt: 0, signing: { generation: 0, secrets: [] } };
  // Tells the /readyz answers waiting for a judgement (as many as there are: no listener limit).
  const judged = new EventEmitter().setMaxListeners(0);
  const take = (p: Publication) => {
    Object.assign(state, p);
    if (p.readiness) {
      state.readinessAt = p.readinessAt ?? Date.now();
      judged.emit('judged');
    }
  };
  take(data.first);
  /** Resolves true once readiness is fresh (at once if it is), false after {@link JUDGEMENT_WAIT_MS}. */
  const freshReadiness = async (): Promise<boolean> => {
    Atomics.add(data.shared, SHARED.readyAsks, 1n);
    if (Date.now() - state.readinessAt <= FRESH_MS) return true;
    return once(judged, 'judged', { signal: AbortSignal.timeout(JUDGEMENT_WAIT_MS) }).then(
      () => true,
      () => false,
    );
  };
  const interactions = httpInteractionsHandler({
    secrets: () => state.signing.secrets.map((s) => ({ reveal: () => s })),
    onPayload: (payload, index) => say({ type: 'interaction', payload, generation: state.signing.generation, index }),
    clock: { now: () => Date.now() + Number(Atomics.load(data.shared, SHARED.clockOffset)) },
    log: { warn: (fields, msg) => log('warn', fields, msg), error: (fields, msg) => log('error', fields, msg) },
  });

  const { limits } = data;
  const server: Server = createServer({
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
  });
  // Before the handler: it sees each request first, and each answer's end.
  const guard = new ConnectionGuard(server, limits, log);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === INTERACTIONS_PATH) {
      if (state.signing.secrets.length > 0) interactions(req, res);
      else answerJson(res, 404, { error: 'not found' });
      return;
    }
    if (!HEALTH_PATHS.includes(path)) {
      // The console's pages to its own thread; the on-call tools' webhooks to the main thread.
      const toConsole = state.console && !ON_CALL_PATHS.some((p) => path.startsWith(p));
      relay(req, res, toConsole ? state.console! : data.relay, log);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    const stall = stalled(data);
    if (path === '/healthz') {
      if (stall) answerJson(res, 503, { status: 'stalled', detail: stall });
      else answerJson(res, state.alive ? 200 : 503, { status: state.alive ? 'ok' : 'stopped' });
    } else if (path === '/readyz') {
      void freshReadiness().then((fresh) => {
        const { leader } = state;
        const stillStalled = stalled(data);
        const checks = [
          ...(leader ? [leader] : []),
          ...state.readiness.filter((c) => c.check !== 'leader'),
          ...(stillStalled ? [{ check: 'main_thread', ok: false, detail: stillStalled }] : []),
        ];
        const ready = checks.every((c) => c.ok);
        answerJson(res, ready ? 200 : 503, {
          status: ready ? 'ready' : 'not ready',
          ...state.role,
          // Which judgement this is: one made for this answer (or within the last 2 s), or the
          // last one made, the main thread not judging in time (blocked, or judging seldom).
          judgement: fresh ? 'fresh' : 'last',
          judged_ms_ago: Math.max(0, Date.now() - state.readinessAt),
          checks,
        });
      });
    } else if (state.metrics) {
      res.writeHead(200, { 'content-type': state.metrics.contentType }).end(state.metrics.text);
    } else {
      res.writeHead(503).end();
    }
  });

  port.on('message', (message: ToFrontDoor | ThreadEnd) => {
    if (message.type === 'publish') take(message.publication);
    else {
      guard.stop();
      server.close(() => {
        say({ type: 'ended' });
        port.close();
      });
      server.closeAllConnections();
    }
  });
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (server.listening) log('error', { err: err.message, code: err.code }, 'the listener failed');
    else say({ type: 'failed', message: err.message, code: err.code });
  });
  server.listen(data.port, data.host, () => {
    const bound = server.address();
    if (bound && typeof bound === 'object') say({ type: 'ready', host: bound.address, port: bound.port });
  });
}

/** Why the main thread counts as stalled (its heartbeat older than allowed), or undefined. */
function stalled(data: FrontDoorData): string | undefined {
  const ageMs = Date.now() - Number(Atomics.load(data.shared, SHARED.heartbeat));
  if (ageMs <= data.stallAfterMs) return undefined;
  return (
    `the daemon's main thread has not turned for ${(ageMs / 1000).toFixed(1)}s ` +
    `(allowed ${(data.stallAfterMs / 1000).toFixed(1)}s: the longest a PostgreSQL statement may hold it, and a margin)`
  );
}

/**
 * Passes one request to the main thread's listener and its answer back. The body is read whole
 * here first (within the listener's request timeout, at most {@link RELAY_BODY_MAX_BYTES}), so
 * the main thread gets whole requests only, never a slow client's trickle, and takes it in one
 * write. A connection of its own each (no pool): the main thread sets the client's address on the
 * connection it sees, so one connection must carry one client's request.
 */
function relay(req: IncomingMessage, res: ServerResponse, to: RelayTarget, log: Log): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if (size > RELAY_BODY_MAX_BYTES) return;
    size += chunk.length;
    if (size <= RELAY_BODY_MAX_BYTES) chunks.push(chunk);
    else {
      chunks.length = 0;
      const body = JSON.stringify({ error: 'too large' });
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(body);
    }
  });
  req.on('end', () => {
    if (size <= RELAY_BODY_MAX_BYTES) send(req, Buffer.concat(chunks), res, to, log);
  });
}

/** Sends a request read whole to the main thread's listener; its answer is streamed back. */
function send(req: IncomingMessage, body: Buffer, res: ServerResponse, to: RelayTarget, log: Log): void {
  const headers = passOn(req.rawHeaders, ['content-length']);
  if (body.length > 0 || (req.method !== 'GET' && req.method !== 'HEAD'))
    headers.push('content-length', String(body.length));
  headers.push(RELAY_HEADER, `${to.token} ${req.socket.remotePort ?? 0} ${req.socket.remoteAddress ?? ''}`);
  const inner = request({ socketPath: to.socketPath, method: req.method, path: req.url, headers, agent: false });
  inner.on('response', (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, passOn(answer.rawHeaders));
    answer.pipe(res);
  });
  inner.on('error', (err) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    log('warn', { err: err.message, path: req.url?.split('?')[0] }, 'cannot relay a request to the main thread');
    answerJson(res, 502, { error: 'the daemon did not answer' });
  });
  // A client gone before the answer: the main thread's work is not waited for.
  res.on('close', () => {
    if (!res.writableFinished) inner.destroy();
  });
  inner.end(body);
}

/** Raw headers less those of one hop, the relay's own (which no client may set), and `also`. */
function passOn(raw: string[], also: readonly string[] = []): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!HOP_HEADERS.has(name) && !also.includes(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

if (parentPort && (workerData as { frontDoor?: FrontDoorData } | null)?.frontDoor) {
  frontDoor((workerData as { frontDoor: FrontDoorData }).frontDoor, parentPort);
}
