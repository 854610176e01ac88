/**
 * One worker thread of the daemon, kept from the main thread: the console's (`console-thread.ts`),
 * Socket Mode's (`socket-mode-thread.ts`) and the front door (`health-server.ts`). It is started
 * from its module through {@link workerBoot} (the build or the sources alike), says `ready` once it
 * serves, or `failed` with why it cannot (an error for whoever started it); its log lines are
 * logged by the daemon's logger at their level; after a crash it is said and, when it has a
 * restart policy, started again after a backoff (afresh once it ran steadily); asked to `end`, it
 * closes what it holds and says `ended`, or is terminated after {@link THREAD_END_WAIT_MS}.
 */
import { Worker } from 'node:worker_threads';
import type { Level } from 'pino';
import { Backoff, type BackoffPolicy } from './backoff.js';
import { errorText } from './error-text.js';
import type { Logger } from './logger.js';
import { workerBoot, workerEntry } from './worker-entry.js';

/** How long a thread asked to end may take to close what it holds before it is terminated. */
export const THREAD_END_WAIT_MS = 2_000;

/** What every supervised thread may say, beside its own messages (one of which is `ready`). */
export type ThreadSays =
  /** It cannot start (its module did not load, its port is taken, ...): `code` the error's, if any. */
  | { type: 'failed'; message: string; code?: string | undefined }
  /** One line of its log, logged by the daemon's logger. */
  | { type: 'log'; level: Level; fields: Record<string, unknown>; msg: string }
  /** It closed what it held, after `end`. */
  | { type: 'ended' };

/** What every supervised thread is told, beside its own messages: close what it holds, then say `ended`. */
export type ThreadEnd = { type: 'end' };

/** The thread's first lines: if it cannot load, it says why. */
const BOOT = workerBoot(`parentPort.postMessage({ type: 'failed', message });`);

/** Runs `ask` (a message to a thread), then waits for `answered` (its reply), at most {@link THREAD_END_WAIT_MS}. */
export async function askWithin(answered: Promise<void>, ask: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  ask();
  await Promise.race([answered, new Promise((resolve) => (timer = setTimeout(resolve, THREAD_END_WAIT_MS)))]);
  clearTimeout(timer);
}

/** What a {@link SupervisedThread} runs, and how it is kept. */
export interface SupervisedThreadOptions<From extends { type: string }> {
  /** Its module (no extension) beside `base`, the starting file's `import.meta.url`. */
  module: string;
  base: string;
  /** Its `workerData` beside `boot`, made at each start (the thread starts when its own key is there). */
  data: () => Record<string, unknown>;
  /** Its name in log lines and errors ("the console's thread"). */
  name: string;
  /** What is not done while it is down, said when it ends unasked. */
  down: string;
  /** Each of its own messages but `ready`. */
  heard: (m: Exclude<From, { type: 'ready' }>) => void;
  /** Each exit, asked or not: nothing waits on it any more. */
  exited?: () => void;
  /** Started again after a crash, after this backoff, afresh once it ran `steadyMs`; `then` once ready again. */
  restart?: { backoff: BackoffPolicy; steadyMs: number; then?: () => void };
}

/** A worker thread started and kept from the main thread (see the file's comment). */
export class SupervisedThread<To extends { type: string }, From extends { type: string }> {
  readonly #backoff: Backoff | undefined;
  #worker: Worker | undefined;
  #ready = false;
  #startedAt = 0;
  #ending = false;
  #ended: (() => void) | undefined;
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: SupervisedThreadOptions<From>,
    /** Where its lines and its crashes are said (a reload may give another). */
    public logger: Logger,
  ) {
    this.#backoff = options.restart && new Backoff(options.restart.backoff);
  }

  /** The thread now (undefined while down): what a test ends to see it crash. */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** Whether it said `ready` and runs still. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Starts it; resolves with its `ready` message, rejects with why it could not start. */
  start(): Promise<Extract<From, { type: 'ready' }>> {
    const { name } = this.options;
    const boot = workerEntry(this.options.module, this.options.base);
    const worker = new Worker(BOOT, { eval: true, workerData: { boot, ...this.options.data() } });
    // Never what keeps the process alive: the daemon's own loops and listener do.
    worker.unref();
    this.#worker = worker;
    this.#startedAt = performance.now();
    return new Promise((resolve, reject) => {
      worker.on('message', (m: From | ThreadSays) => {
        if (m.type === 'ready') {
          this.#ready = true;
          resolve(m as Extract<From, { type: 'ready' }>);
        } else if (m.type === 'failed') {
          const failed = m as Extract<ThreadSays, { type: 'failed' }>;
          void worker.terminate();
          reject(Object.assign(new Error(`${name} could not start: ${failed.message}`), { code: failed.code }));
        } else if (m.type === 'log') {
          const line = m as Extract<ThreadSays, { type: 'log' }>;
          this.logger[line.level](line.fields, line.msg);
        } else if (m.type === 'ended') this.#ended?.();
        else this.options.heard(m as Exclude<From, { type: 'ready' }>);
      });
      worker.on('error', (err) => {
        this.logger.error({ err: errorText(err) }, `${name} failed`);
        reject(err);
      });
      worker.on('exit', (code) => {
        const wasReady = this.#ready;
        this.#ready = false;
        if (this.#worker === worker) this.#worker = undefined;
        reject(new Error(`${name} ended before it was ready (exit code ${code})`));
        this.options.exited?.();
        if (this.#ending) this.#ended?.();
        else if (this.#backoff || wasReady) this.#crashed(code);
      });
    });
  }

  /** Posts to the thread; nothing while it is down (a restart sends what it needs again). */
  post(message: To | ThreadEnd): void {
    this.#worker?.postMessage(message);
  }

  /** Ends it: asked to close what it holds, terminated after `THREAD_END_WAIT_MS` (2 s) at most. */
  async end(): Promise<void> {
    this.#ending = true;
    clearTimeout(this.#restartTimer);
    const worker = this.#worker;
    if (!worker) return;
    await askWithin(new Promise<void>((resolve) => (this.#ended = resolve)), () => this.post({ type: 'end' }));
    await worker.terminate();
  }

  /** A crash: said, and the thread started again after a backoff when it has a restart policy. */
  #crashed(code: number): void {
    const { name, down, restart } = this.options;
    if (!restart || !this.#backoff) {
      this.logger.error({ code }, `${name} ended; ${down}`);
      return;
    }
    if (performance.now() - this.#startedAt >= restart.steadyMs) this.#backoff.reset();
    const waitMs = this.#backoff.failed();
    this.logger.error({ code, restartInMs: waitMs, restarts: this.#backoff.failures }, `${name} ended; ${down}`);
    this.#restartTimer = setTimeout(() => {
      if (this.#ending) return;
      this.start().then(
        () => {
          this.logger.info(`${name} restarted`);
          restart.then?.();
        },
        (err: unknown) => {
          if (!this.#ending) this.logger.error({ err: errorText(err) }, `${name} could not restart`);
        },
      );
    }, waitMs);
    this.#restartTimer.unref();
  }
}
