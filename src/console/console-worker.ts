/**
 * The console's thread: the web console answered away from the main thread, which blocks while a
 * PostgreSQL statement runs (`src/state/postgres-channel.ts`) and while a cycle's transaction
 * commits. It has its own state connection (SQLite: a second connection, whose WAL reads never
 * wait on the writer; PostgreSQL: a channel and connection of its own), so a page waits at most
 * on its own statements. It listens on a unix socket in a private directory, where the front door
 * relays the console's paths with its token (`fromFrontDoor`), and runs the console's handler
 * unchanged (`console-handler.ts`) over what the main thread publishes (`console-thread.ts`):
 * the config in force, the jobs, the leader's write fence; it asks the main thread for readiness
 * and the API's counters (the sources page) and for a remediation (the running remediator
 * decides it), and tells it to wake the delivery loop after an acknowledgement.
 */
import fs from 'node:fs';
import type { Level } from 'pino';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { AlertStore } from '../alerts/alert-store.js';
import type { Config } from '../config/load-config.js';
import { secretTransfer } from '../config/secret-transfer.js';
import type { Clock } from '../lib/clock.js';
import { answerJson } from '../lib/answer-json.js';
import { errorText } from '../lib/error-text.js';
import { createLogger } from '../lib/logger.js';
import type { ThreadEnd, ThreadSays } from '../lib/supervised-thread.js';
import { compilePolicies, requestablePolicy } from '../remediation/policy.js';
import { fromFrontDoor } from '../server/health-server.js';
import { openState, sameState } from '../state/open-state.js';
import type { Store } from '../state/store.js';
import { writeFence } from '../state/write-fence.js';
import { createConsoleHandler } from './console-handler.js';
import {
  REMEDIATION_DECISION_WAIT_MS,
  type ConsoleRemediation,
  type ConsoleRemediationAnswer,
} from './remediate-actions.js';
import type { ConsolePublication, ConsoleThreadData, FromConsole, ToConsole } from './console-thread-protocol.js';
import type { DaemonFigures } from './pages/sources-page.js';

/**
 * How long a page waits for the main thread's figures (readiness, the API's counters) before it
 * shows the last ones: under a second, so a blocked main thread delays the sources page little.
 */
const FIGURES_WAIT_MS = 800;
/** Figures asked for within this long (ms) are shown again rather than asked for anew. */
const FIGURES_REUSE_MS = 1_000;

/** What the console reads of the running daemon, as last published: its config and jobs unpacked. */
type Published = Required<Pick<ConsolePublication, 'remediation' | 'fence'>> & {
  config: Config;
  jobs: ReadonlyMap<string, string>;
};

/** Runs the console's thread (see the file's comment). */
export function consoleWorker(data: ConsoleThreadData, port: MessagePort): void {
  const say = (message: FromConsole | ThreadSays) => port.postMessage(message);
  const published: Published = {
    ...data.first,
    config: secretTransfer.unpack<Config>(data.first.config),
    jobs: new Map(data.first.jobs),
  };
  const logger = createLogger({
    level: data.logLevel,
    format: 'json',
    // Each line to the daemon's logger, at its level.
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        const line = JSON.parse(String(chunk)) as Record<string, unknown>;
        const { level, msg } = line;
        for (const key of ['level', 'msg', 'time', 'pid', 'hostname']) delete line[key];
        say({ type: 'log', level: logger.levels.labels[Number(level)] as Level, fields: line, msg: String(msg ?? '') });
        done();
      },
    }),
  });
  const clock: Clock = {
    now: () => (Atomics.load(data.clock, 1) === 1n ? Number(Atomics.load(data.clock, 0)) : Date.now()),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
  const open = (config: Config) =>
    openState(config.state, { logger, clock, writeGuard: writeFence(() => published.fence) });
  let store: Store = open(published.config);
  let policies = compilePolicies(published.config.remediation);
  const asks = new Asks(say);

  const remediation: ConsoleRemediation = {
    offer: (fingerprint) => {
      const alert = new AlertStore(store).get(fingerprint);
      if (!alert) return undefined;
      return requestablePolicy(policies, published.config.remediation.enabled, alert)?.policy.action.words.request;
    },
    request: (fingerprint, asker, now) => asks.remediate(fingerprint, asker, now),
  };
  const handler = createConsoleHandler({
    get store() {
      return store;
    },
    clock,
    logger,
    figures: () => asks.figures(),
    config: () => published.config,
    jobs: () => published.jobs,
    runtime: () => ({
      notifier: { wake: () => say({ type: 'wake' }) },
      remediation: published.remediation ? remediation : undefined,
    }),
  });

  const take = ({ config: packed, jobs, ...p }: ConsolePublication) => {
    if (packed !== undefined) {
      const config = secretTransfer.unpack<Config>(packed);
      if (!sameState(published.config.state, config.state)) {
        const old = store;
        store = open(config);
        old.close();
      }
      policies = compilePolicies(config.remediation);
      published.config = config;
    }
    if (jobs) published.jobs = new Map(jobs);
    // The remediator's presence and the fence, as published.
    Object.assign(published, p);
  };

  const server: Server = createServer((req, res) => {
    if (fromFrontDoor(req, res, data.token) && !handler(req, res)) answerJson(res, 404, { error: 'not found' });
  });
  port.on('message', (message: ToConsole | ThreadEnd) => {
    if (message.type === 'publish') take(message.publication);
    else if (message.type === 'figures' || message.type === 'remediated') asks.answered(message);
    else {
      asks.close();
      server.close(() => {
        store.close();
        say({ type: 'ended' });
        port.close();
      });
      server.closeAllConnections();
    }
  });
  server.on('error', (err) => say({ type: 'failed', message: errorText(err) }));
  // A socket left by a thread that crashed is in the way of its successor.
  fs.rmSync(data.socketPath, { force: true });
  server.listen(data.socketPath, () => say({ type: 'ready' }));
}

/** What the console asks the main thread, each answer awaited by its number. */
class Asks {
  #seq = 0;
  readonly #waiting = new Map<number, (m: Extract<ToConsole, { type: 'figures' | 'remediated' }>) => void>();
  #last: DaemonFigures = { readiness: [], apiRequests: [], apiErrors: [] };
  #askedAt = -Infinity;
  #asking: Promise<DaemonFigures> | undefined;

  constructor(private readonly say: (message: FromConsole) => void) {}

  /**
   * Readiness and the API's counters as the main thread has them now; the last ones when it does
   * not answer within {@link FIGURES_WAIT_MS} (blocked), or when asked within {@link FIGURES_REUSE_MS}.
   */
  figures(): Promise<DaemonFigures> {
    if (this.#asking) return this.#asking;
    if (performance.now() - this.#askedAt < FIGURES_REUSE_MS) return Promise.resolve(this.#last);
    const id = ++this.#seq;
    this.#asking = new Promise<DaemonFigures>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        resolve(this.#last);
      }, FIGURES_WAIT_MS);
      this.#waiting.set(id, (m) => {
        clearTimeout(timer);
        if (m.type === 'figures') this.#last = m.figures;
        resolve(this.#last);
      });
      this.say({ type: 'figures', id });
    }).finally(() => {
      this.#asking = undefined;
      this.#askedAt = performance.now();
    });
    return this.#asking;
  }

  /**
   * A remediation asked for, decided by the main thread's remediator; past
   * {@link REMEDIATION_DECISION_WAIT_MS} the page says "asked", and the decision, made when the
   * main thread turns, shows on the alert's page.
   */
  remediate(fingerprint: string, asker: string, now: number): Promise<ConsoleRemediationAnswer> {
    const id = ++this.#seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ outcome: 'asked' }), REMEDIATION_DECISION_WAIT_MS);
      this.#waiting.set(id, (m) => {
        clearTimeout(timer);
        if (m.type === 'remediated' && m.result) resolve(m.result);
        else reject(new Error(m.type === 'remediated' ? (m.error ?? 'no answer') : 'no answer'));
      });
      this.say({ type: 'remediate', id, fingerprint, asker, now });
    });
  }

  answered(m: Extract<ToConsole, { type: 'figures' | 'remediated' }>): void {
    const wake = this.#waiting.get(m.id);
    this.#waiting.delete(m.id);
    wake?.(m);
  }

  /** Closing: whatever still waits is answered with nothing. */
  close(): void {
    for (const [id, wake] of this.#waiting) wake({ type: 'remediated', id, error: 'the console is closing' });
    this.#waiting.clear();
  }
}

const started = workerData as { console?: ConsoleThreadData } | null;
if (parentPort && started?.console) {
  try {
    consoleWorker(started.console, parentPort);
  } catch (err) {
    parentPort.postMessage({ type: 'failed', message: errorText(err) } satisfies ThreadSays);
  }
}
