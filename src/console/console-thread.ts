/**
 * The console's thread, from the main thread: started when the console is served, publishing to
 * it what only the running daemon knows, answering what it asks, restarted with backoff when it
 * crashes (logged; the daemon goes on), and ended within `THREAD_END_WAIT_MS` (2 s) at close. See
 * `console-worker.ts` for the thread itself and docs/architecture.md, "The front door".
 */
import { Worker } from 'node:worker_threads';
import { secretTransfer } from '../config/secret-transfer.js';
import type { RelayTarget } from '../server/front-door-protocol.js';
import { privateRelay } from '../server/private-relay.js';
import { Backoff } from '../lib/backoff.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { endThread, workerBoot, workerEntry } from '../lib/worker-entry.js';
import type { WriteFence } from '../state/write-fence.js';
import type { ConsoleDeps } from './console-handler.js';
import type * as Wire from './console-thread-protocol.js';

/** How often the main thread looks whether what it publishes changed, and writes its clock's lead. */
const LOOK_EVERY_MS = 100;
/** A thread that ran this long before it crashed starts the backoff afresh. */
const STEADY_MS = 60_000;
/** Restarts after a crash: 1 s doubling to 30 s, with jitter. */
const RESTART_BACKOFF = { baseMs: 1_000, capMs: 30_000 };

/** The thread's first lines: if it cannot start, it says why. */
const BOOT = workerBoot(`parentPort.postMessage({ type: 'failed', message });`);

/** What {@link ConsoleThread} needs of the running daemon. */
export interface ConsoleThreadDeps {
  console: ConsoleDeps;
  /** What the leader's write guard does now (absent: no replicas, every write open). */
  fence(): WriteFence | undefined;
}

/** The console's thread, seen from the main thread. */
export class ConsoleThread {
  readonly #deps: ConsoleThreadDeps;
  readonly #log: Logger;
  /** Where the front door relays the console's requests. */
  readonly #relay = privateRelay('dw-console-', 'console.sock');
  readonly #clock = new BigInt64Array(new SharedArrayBuffer(16));
  readonly #backoff = new Backoff(RESTART_BACKOFF);
  #worker: Worker | undefined;
  #listening = false;
  #startedAt = 0;
  #closing = false;
  #closed: (() => void) | undefined;
  #restartTimer: NodeJS.Timeout | undefined;
  #lookTimer: NodeJS.Timeout | undefined;
  #unjump: (() => void) | undefined;
  /** What was last published, to publish only changes. */
  #said: { config: unknown; jobs: unknown; remediation: boolean; fence: string } | undefined;

  private constructor(deps: ConsoleThreadDeps) {
    this.#deps = deps;
    this.#log = deps.console.logger.child({ stage: 'console' });
  }

  /**
   * Starts the thread; resolves once it listens, or once it could not start (its state cannot be
   * opened: a PostgreSQL down): that is logged and it is tried again as after a crash, the main
   * thread answering the console meanwhile. The daemon never fails to start or reload for it.
   */
  static async start(deps: ConsoleThreadDeps): Promise<ConsoleThread> {
    const thread = new ConsoleThread(deps);
    await thread
      .#spawn()
      .catch((err: unknown) => thread.#log.error({ err: errorText(err) }, "the console's thread could not start"));
    const clock = deps.console.clock;
    thread.#unjump = clock.onJump?.(() => thread.#writeClock());
    thread.#lookTimer = setInterval(() => thread.#look(), LOOK_EVERY_MS);
    thread.#lookTimer.unref();
    return thread;
  }

  /** Where the front door relays the console's paths, while the thread listens (not while it restarts). */
  get relay(): RelayTarget | undefined {
    return this.#listening ? { socketPath: this.#relay.socketPath, token: this.#relay.token } : undefined;
  }

  /** The thread now: what a test ends to see it restarted, as a crash would. */
  get thread(): Worker | undefined {
    return this.#worker;
  }

  /** Ends the thread (its connections and state connection closed), in at most `THREAD_END_WAIT_MS` (2 s). */
  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#restartTimer);
    clearInterval(this.#lookTimer);
    this.#unjump?.();
    const worker = this.#worker;
    if (worker) {
      const done = new Promise<void>((resolve) => (this.#closed = resolve));
      await endThread(worker, done, () => this.#post({ type: 'close' }));
    }
    this.#relay.remove();
  }

  #spawn(): Promise<void> {
    this.#writeClock();
    this.#said = undefined;
    const data: Wire.ConsoleThreadData = {
      socketPath: this.#relay.socketPath,
      token: this.#relay.token,
      clock: this.#clock,
      logLevel: this.#log.level,
      first: this.#publication(true) as Required<Wire.ConsolePublication>,
    };
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { boot: workerEntry('console-worker', import.meta.url), console: data },
    });
    // Never what keeps the process alive: the listener is the front door's.
    worker.unref();
    this.#worker = worker;
    this.#startedAt = performance.now();
    return new Promise((resolve, reject) => {
      worker.on('message', (m: Wire.FromConsole) => {
        if (m.type === 'listening') {
          this.#listening = true;
          resolve();
        } else if (m.type === 'failed') {
          void worker.terminate();
          reject(new Error(`the console's thread could not start: ${m.message}`));
        } else this.#heard(m);
      });
      worker.on('error', (err) => this.#log.error({ err: errorText(err) }, "the console's thread failed"));
      worker.on('exit', (code) => {
        this.#listening = false;
        if (this.#worker === worker) this.#worker = undefined;
        reject(new Error(`the console's thread ended before it listened (exit code ${code})`));
        if (this.#closing) this.#closed?.();
        else this.#restartLater(code);
      });
    });
  }

  /** A crash: said, and the thread started again after a backoff; the daemon goes on. */
  #restartLater(code: number): void {
    if (performance.now() - this.#startedAt >= STEADY_MS) this.#backoff.reset();
    const waitMs = this.#backoff.failed();
    this.#log.error(
      { code, restartInMs: waitMs, restarts: this.#backoff.failures },
      "the console's thread ended; the console is not answered until it is restarted",
    );
    this.#restartTimer = setTimeout(() => {
      if (this.#closing) return;
      this.#spawn().then(
        () => this.#log.info("the console's thread restarted"),
        (err: unknown) => this.#log.error({ err: errorText(err) }, "the console's thread could not restart"),
      );
    }, waitMs);
    this.#restartTimer.unref();
  }

  #heard(m: Exclude<Wire.FromConsole, { type: 'listening' | 'failed' }>): void {
    if (m.type === 'log') this.#logLine(m.line);
    else if (m.type === 'wake') this.#deps.console.runtime?.().notifier.wake();
    else if (m.type === 'figures')
      void this.#figures().then((figures) => this.#post({ type: 'figures', id: m.id, figures }));
    else if (m.type === 'remediate') this.#remediate(m);
    else this.#closed?.();
  }

  /** Readiness judged now, and the API's counters: what the sources page shows of the running daemon. */
  async #figures(): Promise<Wire.ConsoleFigures> {
    const { console } = this.#deps;
    let readiness: Wire.ConsoleFigures['readiness'];
    try {
      readiness = await console.readiness();
    } catch (err) {
      readiness = [{ check: 'readiness', ok: false, detail: `cannot judge readiness: ${errorText(err)}` }];
    }
    const [requests, errors] = await Promise.all([console.metrics.apiRequests.get(), console.metrics.apiErrors.get()]);
    const values = (v: typeof requests.values) => v.map(({ labels, value }) => ({ labels: { ...labels }, value }));
    return { readiness, apiRequests: values(requests.values), apiErrors: values(errors.values) };
  }

  #remediate(m: Extract<Wire.FromConsole, { type: 'remediate' }>): void {
    void (async () => {
      const remediation = this.#deps.console.runtime?.().remediation;
      if (!remediation) return { type: 'remediated', id: m.id, result: { outcome: 'not_covered' } } as const;
      const decided = await remediation.request(m.fingerprint, m.asker, m.now);
      // As data: the outcome may hold what does not cross to a thread (a compiled policy's matchers).
      const result = JSON.parse(JSON.stringify(decided)) as typeof decided;
      return { type: 'remediated', id: m.id, result } as const;
    })()
      .catch((err: unknown) => ({ type: 'remediated', id: m.id, error: errorText(err) }) as const)
      .then((answer) => {
        // Never a page left waiting: an answer that cannot cross is said as an error.
        try {
          this.#post(answer as Wire.ToConsole);
        } catch (err) {
          this.#post({ type: 'remediated', id: m.id, error: errorText(err) });
        }
      });
  }

  /** A line of the thread's logger, logged by the daemon's at its level. */
  #logLine(line: string): void {
    try {
      const {
        level,
        msg,
        time: _time,
        pid: _pid,
        hostname: _host,
        ...fields
      } = JSON.parse(line) as Record<string, unknown>;
      // The daemon's own logger, not this file's child: the line carries its own stage.
      const log = this.#deps.console.logger;
      const name = log.levels.labels[Number(level)] as 'info' | 'warn' | 'error' | undefined;
      log[name ?? 'info'](fields, typeof msg === 'string' ? msg : '');
    } catch {
      this.#log.warn("the console's thread wrote a line that is not JSON");
    }
  }

  /** Publishes what changed since last said (config, jobs, remediation, the fence), and the clock. */
  #look(): void {
    this.#writeClock();
    if (!this.#listening) return;
    const publication = this.#publication(false);
    if (Object.keys(publication).length > 0) this.#post({ type: 'publish', publication });
  }

  #publication(all: boolean): Wire.ConsolePublication {
    const { console } = this.#deps;
    const config = console.config();
    const jobs = console.jobs();
    const remediation = console.runtime?.().remediation !== undefined;
    const fence = this.#deps.fence() ?? { mode: 'open' };
    const fenceText = JSON.stringify(fence);
    const said = this.#said;
    const out: Wire.ConsolePublication = {};
    if (all || said?.config !== config) out.config = secretTransfer.pack(config);
    if (all || said?.jobs !== jobs) out.jobs = [...jobs];
    if (all || said?.remediation !== remediation) out.remediation = remediation;
    if (all || said?.fence !== fenceText) out.fence = fence;
    this.#said = { config, jobs, remediation, fence: fenceText };
    return out;
  }

  /** The daemon's time for the thread, when its clock is one that jumps (see `ConsoleThreadData.clock`). */
  #writeClock(): void {
    const { clock } = this.#deps.console;
    if (!clock.onJump) return;
    Atomics.store(this.#clock, 0, BigInt(Math.round(clock.now())));
    Atomics.store(this.#clock, 1, 1n);
  }

  #post(message: Wire.ToConsole): void {
    this.#worker?.postMessage(message);
  }
}
