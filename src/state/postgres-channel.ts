/**
 * PostgreSQL, synchronously, from the main thread: a worker thread (`postgres-worker.ts`) holds
 * the connection; the main thread posts one request on a MessagePort, blocks with `Atomics.wait`
 * on a shared Int32Array until the worker has answered and woken it, then takes the answer off
 * the port with `receiveMessageOnPort` (the technique of synckit and make-synchronous). Why
 * synchronous at all: the engine writes a cycle's lifecycle, outbox and remediation in one
 * synchronous transaction, and nothing may interleave with it (docs/architecture.md).
 *
 * Every wait has a deadline, so a PostgreSQL that stops answering never hangs the daemon: past it
 * the worker (and with it the connection, and any transaction on it, which the server then rolls
 * back) is thrown away and a new one started for the next request. After a connection failure,
 * requests fail at once for a short while that grows while it lasts, so a dead server costs the
 * daemon's other work (its console, /healthz) one wait now and then, not one per statement.
 *
 * A request may also be given a shorter limit of its own ({@link RequestLimit}): the leader's
 * statements wait no longer than its lease lets it act, a probe's no longer than a probe may take.
 * Past that limit the worker is thrown away the same way (the server rolls the transaction back),
 * and the answer is {@link LIMIT_CODE}, which the caller turns into what the limit meant.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { workerBoot, workerEntry, type WorkerEntry } from '../lib/worker-entry.js';
import type {
  PostgresAsk,
  PostgresConnection,
  PostgresReply,
  PostgresRequest,
  PostgresWorkerData,
} from './postgres-worker.js';
import type { PostgresWireError } from './postgres-error.js';

/** Beyond the server's own statement_timeout: time for its "canceled" answer to arrive. */
const ANSWER_GRACE_MS = 2_000;
/** How long the first fail-fast spell after a connection failure lasts; it doubles up to the maximum while failures go on. */
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 10_000;
/** How long a goodbye to the server may take at close. */
const CLOSE_WAIT_MS = 1_000;

/** The error code of a request cut at its own limit ({@link RequestLimit.limitMs}), not at the connection's. */
export const LIMIT_CODE = 'DW_WAIT_LIMIT';

/** What a caller adds to one request. */
export interface RequestLimit {
  /** Wait at most this long (ms) for the answer; 0 or less: do not send at all. */
  limitMs?: number | undefined;
  /** Send even while requests fail fast after a connection failure (a probe of whether the server is back). */
  force?: boolean;
}

/** The signal's value once the worker could not start: it has posted why, as the answer to any request. */
const WORKER_FAILED = -1;

/**
 * The worker's first lines ({@link workerBoot}); if it cannot start, it says why and wakes the
 * main thread rather than leave it waiting to its deadline.
 */
const BOOT = workerBoot(`
    workerData.port.postMessage({ seq: ${WORKER_FAILED}, ok: false, error: { message: 'the PostgreSQL worker thread could not start: ' + message, code: undefined, connection: true } });
    Atomics.store(workerData.signal, 0, ${WORKER_FAILED});
    Atomics.notify(workerData.signal, 0);
`);

/** A worker under way: its thread, the main thread's end of its port, and the shared signal. */
interface RunningWorker {
  thread: Worker;
  port: MessagePort;
  signal: Int32Array;
}

/**
 * The longest the main thread waits for one request's answer: it may first have to connect, then
 * run its statement, then hear the server's "canceled". What `/healthz` allows a stall of the main
 * thread (src/app/health-listener.ts) is derived from it.
 */
export function requestBudgetMs(
  connection: Pick<PostgresConnection, 'connectTimeoutMs' | 'statementTimeoutMs'>,
): number {
  return connection.connectTimeoutMs + connection.statementTimeoutMs + ANSWER_GRACE_MS;
}

/** The main thread's end of the worker (see the file's comment). */
export class PostgresChannel {
  #worker: RunningWorker | undefined;
  #seq = 0;
  #down: { until: number; backoffMs: number; error: PostgresWireError } | undefined;

  constructor(private readonly connection: PostgresConnection) {}

  /**
   * Sends one request and waits for its answer. A wait past the deadline, or a worker that died,
   * answers as a lost connection; so does every request for a while after one failed to connect
   * (but a statement aside, which the worker runs on a connection of its own).
   */
  request(ask: PostgresAsk, inTransaction: boolean, limit: RequestLimit = {}): PostgresReply {
    const seq = ++this.#seq;
    // A statement aside is on a connection of its own: the other's spell neither stops it nor is its to start.
    if (ask.op === 'aside') return this.#send({ ...ask, seq, inTransaction: false }, limit.limitMs);
    const down = this.#down;
    if (down && !limit.force && Date.now() < down.until) return { seq, ok: false, error: down.error };
    const reply = this.#send({ ...ask, seq, inTransaction }, limit.limitMs);
    // Cut at the caller's limit: says nothing of the server, so no fail-fast spell either.
    if (!reply.ok && reply.error.code === LIMIT_CODE) return reply;
    if (!reply.ok && reply.error.connection) {
      const backoffMs = down ? Math.min(down.backoffMs * 2, BACKOFF_MAX_MS) : BACKOFF_MIN_MS;
      this.#down = { until: Date.now() + backoffMs, backoffMs, error: reply.error };
    } else {
      this.#down = undefined;
    }
    return reply;
  }

  #send(request: PostgresRequest, limitMs: number | undefined): PostgresReply {
    const budget = requestBudgetMs(this.connection);
    const limited = limitMs !== undefined && limitMs < budget;
    if (limited && limitMs <= 0)
      return limitReached(request.seq, 'no time left to ask PostgreSQL: the limit had passed before it was sent');
    const w = this.#started();
    const deadline = Date.now() + (limited ? limitMs : budget);
    w.port.postMessage(request);
    for (;;) {
      const answered = Atomics.load(w.signal, 0);
      if (answered === request.seq || answered === WORKER_FAILED) break;
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.wait(w.signal, 0, answered, left) === 'timed-out') {
        this.#discard();
        if (limited) return limitReached(request.seq, `no answer from PostgreSQL within ${limitMs}ms`);
        return lost(request.seq, `no answer from PostgreSQL within ${Math.round(budget / 1000)}s`, 'ETIMEDOUT');
      }
    }
    // Answers of earlier requests (none, unless one timed out on this worker) are skipped.
    for (;;) {
      const message = receiveMessageOnPort(w.port);
      if (!message) {
        this.#discard();
        return lost(request.seq, 'the PostgreSQL worker thread ended', undefined);
      }
      const reply = message.message as PostgresReply;
      if (reply.seq === request.seq) return reply;
      if (reply.seq === WORKER_FAILED) {
        this.#discard();
        return { ...reply, seq: request.seq };
      }
    }
  }

  #started(): RunningWorker {
    if (this.#worker) return this.#worker;
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(signal, 0, this.#seq - 1);
    const data: PostgresWorkerData & { boot: WorkerEntry } = {
      port: port2,
      signal,
      connection: this.connection,
      boot: workerEntry('postgres-worker', import.meta.url),
    };
    const thread = new Worker(BOOT, { eval: true, workerData: data, transferList: [port2] });
    // Never what keeps the process alive: a command that forgets to close still exits.
    thread.unref();
    port1.unref();
    // An error of the thread is seen as a missing answer; here it must only not go unhandled.
    thread.on('error', () => undefined);
    this.#worker = { thread, port: port1, signal };
    return this.#worker;
  }

  /** Ends the worker and its connection; the next request starts another. */
  #discard(): void {
    const w = this.#worker;
    this.#worker = undefined;
    if (!w) return;
    w.port.close();
    void w.thread.terminate();
  }

  /** Says goodbye to the server (briefly) and ends the worker. */
  close(): void {
    if (!this.#worker) return;
    const seq = ++this.#seq;
    const w = this.#worker;
    w.port.postMessage({ op: 'close', seq, inTransaction: false } satisfies PostgresRequest);
    if (Atomics.load(w.signal, 0) !== seq) Atomics.wait(w.signal, 0, Atomics.load(w.signal, 0), CLOSE_WAIT_MS);
    this.#discard();
  }
}

/** The answer to a request cut at its own limit (see {@link LIMIT_CODE}). */
function limitReached(seq: number, message: string): PostgresReply {
  return lost(seq, message, LIMIT_CODE);
}

/** The answer to a request whose connection (or worker) is gone, or that got no answer in time. */
function lost(seq: number, message: string, code: string | undefined): PostgresReply {
  return { seq, ok: false, error: { message, code, connection: true } };
}
