/**
 * The daemon's Socket Mode connections, on a thread of their own (`socket-mode-worker.ts`), so
 * that each envelope is acknowledged within Slack's 3 s whatever the main thread is doing (it
 * blocks while a PostgreSQL statement runs, up to ¾ of the lease). The thread is started with the
 * first connection a running configuration asks for, and ended (within 2 s) with the last one; a
 * daemon whose Slack apps take no clicks over Socket Mode never starts it.
 *
 * One per daemon ({@link SocketModeThread.of} its store, which every runtime of the daemon shares),
 * so that a reload keeps a connection whose app token, API root and channels are unchanged: the
 * new runtime reserves it when it is built, before the old one lets go of it, and takes over its
 * clicks when it starts (those that came between are kept for it, {@link WAITING_MAX} at most). A
 * reload that changes the token closes the old connection and opens the new one.
 *
 * An interaction comes back already acknowledged, and is handed to the runtime's handler as a
 * click over HTTP is (`SlackInteractions`): from there on, one path.
 */
import { Worker } from 'node:worker_threads';
import type { Secret } from '../lib/secret.js';
import { Backoff, LOOP_BACKOFF } from '../lib/backoff.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { askWithin, endThread, workerBoot, workerEntry } from '../lib/worker-entry.js';
import type { FromSocketThread, ToSocketThread } from './socket-mode-protocol.js';

/** Clicks kept for a runtime about to start (a reload under way); past it they are dropped, said. */
const WAITING_MAX = 100;

/** The thread's first lines: if it cannot load, it says why. */
const BOOT = workerBoot(`parentPort.postMessage({ type: 'failed', message });`);

/** One app's connection, as a configuration asks for it. */
export interface SocketModeApp {
  /** The app-level token (`xapp-…`). */
  appToken: Secret;
  /** The Web API root `apps.connections.open` is asked at. */
  apiUrl: string;
  /** The channels (names) whose clicks come this way, for the log. */
  channels: readonly string[];
}

/** A runtime's hold on one connection. */
export interface SocketModeLink {
  /** Connects (if not yet), and hands this runtime every click that comes on it from now on. */
  start(onPayload: (payload: unknown) => void): void;
  /** Lets go: the last runtime to do so closes the connection, and the thread with the last one. */
  release(): Promise<void>;
}

/** A connection and the runtimes holding it. */
interface Entry {
  id: number;
  key: string;
  app: SocketModeApp;
  holders: Set<object>;
  /** Who takes its clicks now: the runtime that started last, until it lets go. */
  target: { holder: object; take: (payload: unknown) => void } | undefined;
  /** Asked of the thread. */
  opened: boolean;
  /** Clicks that came while no runtime took them. */
  waiting: unknown[];
}

/** A running thread, and what waits on it. */
interface Thread {
  worker: Worker;
  /** Set once it was asked to end: its exit is then no failure. */
  ending: boolean;
  closed: Map<number, () => void>;
  ended: (() => void) | undefined;
}

const threads = new WeakMap<object, SocketModeThread>();

/** The Socket Mode connections of one daemon (see the file's comment). */
export class SocketModeThread {
  readonly #entries = new Map<string, Entry>();
  readonly #byId = new Map<number, Entry>();
  #nextId = 0;
  #thread: Thread | undefined;
  #restart: NodeJS.Timeout | undefined;
  /** After the thread died (it should not), the wait before it is started again: 1 s doubling to 1 min. */
  readonly #restarts = new Backoff(LOOP_BACKOFF);

  private constructor(private logger: Logger) {}

  /**
   * The connections of the daemon that owns `owner` (its store), made at the first ask; they say
   * their lines through the `logger` of the last runtime that asked (a reload may change its level).
   */
  static of(owner: object, logger: Logger): SocketModeThread {
    let got = threads.get(owner);
    if (!got) threads.set(owner, (got = new SocketModeThread(logger)));
    got.logger = logger;
    return got;
  }

  /** Whether the thread runs (a connection is open, or being opened). */
  get running(): boolean {
    return this.#thread !== undefined;
  }

  /** Reserves the connection `app` asks for (nothing is connected until a holder starts it). */
  reserve(app: SocketModeApp): SocketModeLink {
    // The token is part of the key, never of a log line.
    const key = [app.appToken.reveal(), app.apiUrl, ...app.channels].join('\n');
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { id: ++this.#nextId, key, app, holders: new Set(), target: undefined, opened: false, waiting: [] };
      this.#entries.set(key, entry);
      this.#byId.set(entry.id, entry);
    }
    const holder = {};
    const held = entry;
    held.holders.add(holder);
    return {
      start: (take) => {
        if (!held.holders.has(holder)) return;
        held.target = { holder, take };
        for (const payload of held.waiting.splice(0)) this.#hand(held, payload);
        if (!held.opened) this.#open(held);
      },
      release: () => this.#release(held, holder),
    };
  }

  async #release(entry: Entry, holder: object): Promise<void> {
    if (!entry.holders.delete(holder)) return;
    if (entry.target?.holder === holder) entry.target = undefined;
    if (entry.holders.size > 0) return;
    this.#entries.delete(entry.key);
    this.#byId.delete(entry.id);
    if (entry.waiting.length > 0)
      this.logger.warn(
        { clicks: entry.waiting.length },
        'Slack clicks came over Socket Mode as it closed; nothing done',
      );
    if (!entry.opened) return;
    const thread = this.#thread;
    if (!thread) return;
    if ([...this.#entries.values()].some((e) => e.opened)) {
      await askWithin(new Promise<void>((resolve) => thread.closed.set(entry.id, resolve)), () =>
        this.#post({ type: 'close', id: entry.id }),
      );
      return;
    }
    await this.#end(thread);
  }

  /** Asks the thread (started if need be) to keep `entry`'s connection up. */
  #open(entry: Entry): void {
    entry.opened = true;
    const { app } = entry;
    this.#post({
      type: 'open',
      id: entry.id,
      appToken: app.appToken.reveal(),
      apiUrl: app.apiUrl,
      channels: [...app.channels],
    });
  }

  #post(message: ToSocketThread): void {
    (this.#thread ??= this.#start()).worker.postMessage(message);
  }

  #start(): Thread {
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { boot: workerEntry('socket-mode-worker', import.meta.url), socketMode: true },
    });
    // Never what keeps the process alive: the daemon's own loops do.
    worker.unref();
    const thread: Thread = { worker, ending: false, closed: new Map(), ended: undefined };
    worker.on('message', (m: FromSocketThread) => this.#heard(thread, m));
    worker.on('error', (err) => this.logger.error({ err: errorText(err) }, 'the Socket Mode thread failed'));
    worker.on('exit', () => {
      thread.ended?.();
      for (const closed of thread.closed.values()) closed();
      if (thread.ending || this.#thread !== thread) return;
      this.#thread = undefined;
      this.#died();
    });
    return thread;
  }

  /** The thread ended unasked: its connections are opened again on a new one, after a pause. */
  #died(): void {
    const opened = [...this.#entries.values()].filter((e) => e.opened);
    for (const e of opened) e.opened = false;
    if (opened.length === 0) return;
    const wait = this.#restarts.failed();
    this.logger.error({ retryInMs: wait }, 'the Socket Mode thread ended; starting it again');
    clearTimeout(this.#restart);
    this.#restart = setTimeout(() => {
      for (const e of opened) if (this.#byId.get(e.id) === e && !e.opened) this.#open(e);
    }, wait);
    this.#restart.unref();
  }

  /** Ends the thread: its connections closed, then the thread, within `THREAD_END_WAIT_MS` (2 s). */
  async #end(thread: Thread): Promise<void> {
    if (this.#thread === thread) this.#thread = undefined;
    clearTimeout(this.#restart);
    thread.ending = true;
    await endThread(thread.worker, new Promise<void>((resolve) => (thread.ended = resolve)), () =>
      thread.worker.postMessage({ type: 'end' } satisfies ToSocketThread),
    );
  }

  #heard(thread: Thread, m: FromSocketThread): void {
    if (m.type === 'interaction') {
      const entry = this.#byId.get(m.id);
      if (entry) this.#hand(entry, m.payload);
      else this.logger.warn('a Slack click came over a Socket Mode connection no longer configured; nothing done');
    } else if (m.type === 'log') this.logger[m.level](m.fields, m.msg);
    else if (m.type === 'closed') {
      thread.closed.get(m.id)?.();
      thread.closed.delete(m.id);
    } else if (m.type === 'ended') thread.ended?.();
    else this.logger.error(m.message.replace('the worker', 'the Socket Mode'));
  }

  /** A click to the runtime that takes them, or kept for the next one. */
  #hand(entry: Entry, payload: unknown): void {
    if (!entry.target) {
      if (entry.waiting.length < WAITING_MAX) entry.waiting.push(payload);
      else this.logger.warn('a Slack click came over Socket Mode while no configuration took it; nothing done');
      return;
    }
    try {
      entry.target.take(payload);
    } catch (err) {
      this.logger.error({ err: errorText(err) }, 'cannot take a Slack click');
    }
  }
}
