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
import type { Secret } from '../lib/secret.js';
import { LOOP_BACKOFF } from '../lib/backoff.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { askWithin, SupervisedThread } from '../lib/supervised-thread.js';
import type { FromSocketThread, ToSocketThread } from './socket-mode-protocol.js';

/** Clicks kept for a runtime about to start (a reload under way); past it they are dropped, said. */
const WAITING_MAX = 100;

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
  /**
   * Connects (if not yet), and hands this runtime every click that comes on it from now on, to
   * `onPayload`, which never throws (`SlackInteractions` handles each click apart).
   */
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

const threads = new WeakMap<object, SocketModeThread>();

/** The Socket Mode connections of one daemon (see the file's comment). */
export class SocketModeThread {
  /** The connections reserved, by id. */
  readonly #entries = new Map<number, Entry>();
  #nextId = 0;
  #thread: SupervisedThread<ToSocketThread, FromSocketThread> | undefined;
  /** The connections whose closing is awaited, by id. */
  readonly #closing = new Map<number, () => void>();

  private constructor(private logger: Logger) {}

  /**
   * The connections of the daemon that owns `owner` (its store), made at the first ask; they say
   * their lines through the `logger` of the last runtime that asked (a reload may change its level).
   */
  static of(owner: object, logger: Logger): SocketModeThread {
    let got = threads.get(owner);
    if (!got) threads.set(owner, (got = new SocketModeThread(logger)));
    got.logger = logger;
    if (got.#thread) got.#thread.logger = logger;
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
    let entry = [...this.#entries.values()].find((e) => e.key === key);
    if (!entry) {
      entry = { id: ++this.#nextId, key, app, holders: new Set(), target: undefined, opened: false, waiting: [] };
      this.#entries.set(entry.id, entry);
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
    this.#entries.delete(entry.id);
    if (entry.waiting.length > 0)
      this.logger.warn(
        { clicks: entry.waiting.length },
        'Slack clicks came over Socket Mode as it closed; nothing done',
      );
    const thread = this.#thread;
    if (!entry.opened || !thread) return;
    if (![...this.#entries.values()].some((e) => e.opened)) {
      this.#thread = undefined;
      await thread.end();
    } else if (thread.worker) {
      const closed = new Promise<void>((resolve) => this.#closing.set(entry.id, resolve));
      await askWithin(closed, () => thread.post({ type: 'close', id: entry.id }));
    }
  }

  /** Asks the thread (started if need be) to keep `entry`'s connection up. */
  #open(entry: Entry): void {
    entry.opened = true;
    if (!this.#thread) {
      this.#thread = new SupervisedThread<ToSocketThread, FromSocketThread>(
        {
          module: 'socket-mode-worker',
          base: import.meta.url,
          data: () => ({ socketMode: true }),
          name: 'the Socket Mode thread',
          down: 'its connections are opened again when it is restarted',
          heard: (m) => this.#heard(m),
          exited: () => {
            for (const closed of this.#closing.values()) closed();
            this.#closing.clear();
          },
          // 1 s doubling to 1 min; then every connection opened is asked of it again.
          restart: { backoff: LOOP_BACKOFF, steadyMs: 60_000, then: () => this.#reopen() },
        },
        this.logger,
      );
      const thread = this.#thread;
      thread.start().catch((err: unknown) => {
        // A thread ended as asked before it was ready has nothing to say.
        if (this.#thread === thread) this.logger.error(errorText(err));
      });
    }
    const { app } = entry;
    this.#thread.post({
      type: 'open',
      id: entry.id,
      appToken: app.appToken.reveal(),
      apiUrl: app.apiUrl,
      channels: [...app.channels],
    });
  }

  /** The thread restarted after a crash: the connections it held are opened on it again. */
  #reopen(): void {
    for (const e of this.#entries.values()) if (e.opened) this.#open(e);
  }

  #heard(m: Exclude<FromSocketThread, { type: 'ready' }>): void {
    if (m.type === 'interaction') {
      const entry = this.#entries.get(m.id);
      if (entry) this.#hand(entry, m.payload);
      else this.logger.warn('a Slack click came over a Socket Mode connection no longer configured; nothing done');
    } else {
      this.#closing.get(m.id)?.();
      this.#closing.delete(m.id);
    }
  }

  /** A click to the runtime that takes them, or kept for the next one. */
  #hand(entry: Entry, payload: unknown): void {
    if (!entry.target) {
      if (entry.waiting.length < WAITING_MAX) entry.waiting.push(payload);
      else this.logger.warn('a Slack click came over Socket Mode while no configuration took it; nothing done');
      return;
    }
    entry.target.take(payload);
  }
}
