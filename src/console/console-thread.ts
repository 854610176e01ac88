/**
 * The console's thread, from the main thread: started when the console is served, publishing to
 * it what only the running daemon knows, answering what it asks, restarted with backoff when it
 * crashes (logged; the daemon goes on), and ended within `THREAD_END_WAIT_MS` (2 s) at close. See
 * `console-worker.ts` for the thread itself and docs/architecture.md, "The front door".
 */
import { performance } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { secretTransfer } from '../config/secret-transfer.js';
import type { RelayTarget } from '../server/front-door-protocol.js';
import { privateRelay } from '../server/private-relay.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { SupervisedThread } from '../lib/supervised-thread.js';
import type { RemediationRequest } from '../remediation/remediator.js';
import type { WriteFence } from '../state/write-fence.js';
import type { ConsoleDeps } from './console-handler.js';
import type * as Wire from './console-thread-protocol.js';

/** How often the main thread looks whether what it publishes changed, and writes its clock's lead. */
const LOOK_EVERY_MS = 100;

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
  readonly #thread: SupervisedThread<Wire.ToConsole, Wire.FromConsole>;
  #lookTimer: NodeJS.Timeout | undefined;
  #unjump: (() => void) | undefined;
  /** When the main thread last looked (`performance.now()`), by its timer or a {@link beat}. */
  #lookedAt = -Infinity;
  /** What was last published, to publish only changes. */
  #said: { config: unknown; jobs: unknown; remediation: boolean; fence: string } | undefined;

  private constructor(deps: ConsoleThreadDeps) {
    this.#deps = deps;
    this.#log = deps.console.logger.child({ stage: 'console' });
    this.#thread = new SupervisedThread<Wire.ToConsole, Wire.FromConsole>(
      {
        module: 'console-worker',
        base: import.meta.url,
        data: () => ({ console: this.#data() }),
        name: "the console's thread",
        down: 'the console is not answered until it is restarted',
        heard: (m) => this.#heard(m),
        // 1 s doubling to 30 s, with jitter; a thread that ran a minute starts afresh.
        restart: { backoff: { baseMs: 1_000, capMs: 30_000 }, steadyMs: 60_000 },
      },
      // The daemon's own logger, not this file's child: a line of the thread carries its own stage.
      deps.console.logger,
    );
  }

  /**
   * Starts the thread; resolves once it listens, or once it could not start (its state cannot be
   * opened: a PostgreSQL down): that is logged and it is tried again as after a crash, the main
   * thread answering the console meanwhile. The daemon never fails to start or reload for it.
   */
  static async start(deps: ConsoleThreadDeps): Promise<ConsoleThread> {
    const thread = new ConsoleThread(deps);
    await thread.#thread
      .start()
      .catch((err: unknown) => thread.#log.error({ err: errorText(err) }, "the console's thread could not start"));
    thread.#unjump = deps.console.clock.onJump?.(() => thread.#writeClock());
    thread.#lookTimer = setInterval(() => thread.#look(), LOOK_EVERY_MS);
    thread.#lookTimer.unref();
    return thread;
  }

  /** Where the front door relays the console's paths, while the thread listens (not while it restarts). */
  get relay(): RelayTarget | undefined {
    return this.#thread.ready ? { socketPath: this.#relay.socketPath, token: this.#relay.token } : undefined;
  }

  /** The thread now: what a test ends to see it restarted, as a crash would. */
  get thread(): Worker | undefined {
    return this.#thread.worker;
  }

  /**
   * Publishes what changed, at most every {@link LOOK_EVERY_MS}: told between the statements of a
   * long transaction, while the main thread's timers wait. So the thread's copy of the leader's
   * fence follows a lease renewed during it (`LeaderElection.keepUp`): without it, a console write
   * near the end of a storm's transaction was refused with the deadline the copy still had.
   */
  beat(): void {
    if (performance.now() - this.#lookedAt >= LOOK_EVERY_MS) this.#look();
  }

  /** Ends the thread (its connections and state connection closed), in at most `THREAD_END_WAIT_MS` (2 s). */
  async close(): Promise<void> {
    clearInterval(this.#lookTimer);
    this.#unjump?.();
    await this.#thread.end();
    this.#relay.remove();
  }

  /** What the thread starts with: the first publication whole, the clock written. */
  #data(): Wire.ConsoleThreadData {
    this.#writeClock();
    this.#said = undefined;
    return {
      socketPath: this.#relay.socketPath,
      token: this.#relay.token,
      clock: this.#clock,
      logLevel: this.#log.level,
      first: this.#publication(true) as Required<Wire.ConsolePublication>,
    };
  }

  #heard(m: Exclude<Wire.FromConsole, { type: 'ready' }>): void {
    if (m.type === 'wake') this.#deps.console.runtime?.().notifier.wake();
    else if (m.type === 'figures')
      void this.#deps.console.figures().then((figures) => this.#thread.post({ type: 'figures', id: m.id, figures }));
    else this.#remediate(m);
  }

  #remediate(m: Extract<Wire.FromConsole, { type: 'remediate' }>): void {
    void (async (): Promise<Wire.ToConsole> => {
      const remediation = this.#deps.console.runtime?.().remediation;
      const decided = remediation
        ? await remediation.request(m.fingerprint, m.asker, m.now)
        : ({ outcome: 'not_covered' } as const);
      // As data: the outcome may hold what does not cross to a thread (a compiled policy's
      // matchers); as data it always crosses, so no page is left waiting.
      return { type: 'remediated', id: m.id, result: JSON.parse(JSON.stringify(decided)) as RemediationRequest };
    })()
      .catch((err: unknown): Wire.ToConsole => ({ type: 'remediated', id: m.id, error: errorText(err) }))
      .then((answer) => this.#thread.post(answer));
  }

  /** Publishes what changed since last said (config, jobs, remediation, the fence), and the clock. */
  #look(): void {
    this.#lookedAt = performance.now();
    this.#writeClock();
    if (!this.#thread.ready) return;
    const publication = this.#publication(false);
    if (Object.keys(publication).length > 0) this.#thread.post({ type: 'publish', publication });
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
}
