/**
 * The health listener as the configuration wants it: started, moved or stopped to match
 * `server.listen`, and kept across reloads that leave it alone. The web console rides on it, and
 * Slack's posts of button clicks (`/slack/interactions`), and PagerDuty's and Opsgenie's webhooks
 * (`/pagerduty/<channel>`, `/opsgenie/<channel>`); all read the config in force at each
 * request, so a reload that changes them needs no restart of the listener. It listens on a thread
 * of its own (`src/server/front-door-worker.ts`); its `/healthz` fails once the main thread has
 * not turned for longer than a PostgreSQL statement may hold it ({@link stallBoundMs}). A long
 * transaction beats between its statements ({@link HealthListener.beat}), so the bound is one
 * statement's, not one transaction's.
 */
import { createConsoleHandler, type ConsoleDeps } from '../console/console-handler.js';
import { consoleServing } from '../config/console-config.js';
import { ConsoleThread } from '../console/console-thread.js';
import type { Config, StateConfig } from '../config/load-config.js';
import { errorText } from '../lib/error-text.js';
import { onCallWebhookHandler, sayUngroupedWebhooks } from '../interactions/on-call-webhook.js';
import {
  DEFAULT_STALL_AFTER_MS,
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
  type RequestHandler,
} from '../server/health-server.js';
import { requestBudgetMs } from '../state/postgres-channel.js';

/** Beyond the longest wait for a statement: the rest of a cycle's synchronous work, on a loaded machine. */
const STALL_MARGIN_MS = 10_000;

/**
 * How long the main thread may go without turning before `/healthz` says it is stuck: the longest
 * it may wait for one PostgreSQL statement (connect, run, hear "canceled"), and a margin; never
 * less than the default (SQLite's statements do not wait on a network, its cycles' work does not
 * either, and a first cycle of a large estate still takes seconds).
 */
export function stallBoundMs(state: StateConfig): number {
  if (state.url === undefined) return DEFAULT_STALL_AFTER_MS;
  const longest = requestBudgetMs({
    connectTimeoutMs: state.connect_timeout,
    statementTimeoutMs: state.statement_timeout,
  });
  return Math.max(DEFAULT_STALL_AFTER_MS, longest + STALL_MARGIN_MS);
}

/** What to do when `server.listen` cannot be bound, by the socket's error code. */
const LISTEN_FAILURES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is in use (another deploy-watchdog, or another program, listens there)',
  EACCES: 'this user may not listen there (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'no interface of this host has that address',
};

/** The listener could not bind `server.listen`: said with the key and what to do, never as a bare socket error. */
export class ListenError extends Error {}

/** `err` as a {@link ListenError} when its code says why the address could not be bound; else as it is. */
function listenError(listen: string, err: unknown): unknown {
  const why = LISTEN_FAILURES[String((err as { code?: unknown } | undefined)?.code)];
  if (why === undefined) return err;
  return new ListenError(
    `server.listen ${listen}: ${why}: stop what listens there, or set server.listen to a free port (or "off")`,
  );
}

/** The daemon's `/healthz`, `/readyz` and `/metrics` listener. */
export class HealthListener {
  #server: HealthServer | undefined;
  #listen: string | null = null;
  /** The console's own thread, while the console is served (`console-thread.ts`). */
  #consoleThread: ConsoleThread | undefined;
  readonly #console: RequestHandler;
  /** PagerDuty's and Opsgenie's webhooks, over the console's store and config in force. */
  readonly #webhooks: RequestHandler;

  constructor(
    private readonly deps: Pick<HealthServerOptions, 'metrics' | 'logger' | 'source' | 'interactions'> & {
      console: ConsoleDeps;
    },
  ) {
    this.#console = createConsoleHandler(deps.console);
    // The console's own wake is its runtime's (a thread of its own asks over its port).
    this.#webhooks = onCallWebhookHandler({ ...deps.console, wake: () => deps.console.runtime?.().notifier.wake() });
  }

  /** The address it bound, when it runs. */
  get address(): { host: string; port: number } | undefined {
    return this.#server?.address;
  }

  /**
   * Told between the statements of a long transaction: {@link HealthServer.beat} while the listener
   * runs, and the console's thread hears what changed meanwhile (`ConsoleThread.beat`).
   */
  beat(): void {
    this.#server?.beat();
    this.#consoleThread?.beat();
  }

  /**
   * {@link sync} on a reload: a `server.listen` it cannot bind (a port taken) is said, and the
   * listener stays where it was, as a refused move leaves the old address in force elsewhere
   * (Alertmanager keeps its old config); never the reload undone (the new runtime runs whatever the
   * listener does). The probes go unanswered only when the old address cannot be bound again either.
   */
  async resync(server: Config['server']): Promise<void> {
    const previous = this.#server === undefined ? null : this.#listen;
    try {
      await this.sync(server);
    } catch (err) {
      const kept =
        previous !== null &&
        (await this.sync({ ...server, listen: previous }).then(
          () => true,
          () => false,
        ));
      this.deps.logger.error(
        { err: errorText(err) },
        kept
          ? `the configuration is reloaded, but its listener could not move: it still listens on ${previous} ` +
              'until a reload with a server.listen that can be bound'
          : 'the configuration is reloaded, but its listener could not start: /healthz, /readyz, /metrics ' +
              'and the console are not served until a reload with a server.listen that can be bound',
      );
    }
  }

  /** Starts, moves or stops the listener to match `server.listen`. */
  async sync(server: Config['server']): Promise<void> {
    const listen = server.listen;
    const serving = consoleServing(listen, server.console);
    if (!serving.serve && serving.reason === 'needs_auth') {
      this.deps.logger.warn(`the web console is not served: ${serving.message}`);
    }
    await this.#syncConsole(serving.serve);
    if (listen === this.#listen && (this.#server !== undefined) === (listen !== null)) return;
    await this.#closeServer();
    this.#listen = listen;
    if (listen === null) return;
    sayUngroupedWebhooks(this.deps.console.config(), this.deps.logger);
    this.#server = await startHealthServer({
      // The metrics, the source and the interactions as they are; the console's handler for its deps.
      ...this.deps,
      listen,
      logger: this.deps.logger.child({ stage: 'health' }),
      stallAfterMs: stallBoundMs(this.deps.console.config().state),
      console: this.#console,
      consoleRelay: () => this.#consoleThread?.relay,
      webhooks: this.#webhooks,
      clock: this.deps.console.clock,
    }).catch((err: unknown) => {
      throw listenError(listen, err);
    });
  }

  /**
   * Starts the console's thread when the console is served, ends it when not: its pages are
   * answered there, never waiting on the main thread (the front door relays them to it).
   */
  async #syncConsole(serve: boolean): Promise<void> {
    if (serve === (this.#consoleThread !== undefined)) return;
    const thread = this.#consoleThread;
    this.#consoleThread = undefined;
    if (thread) return thread.close();
    this.#consoleThread = await ConsoleThread.start({
      console: this.deps.console,
      fence: () => this.deps.source.role?.()?.fence,
    });
  }

  /** Stops listening, and the console's thread. */
  async close(): Promise<void> {
    await this.#closeServer();
    await this.#syncConsole(false);
  }

  async #closeServer(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    await server?.close();
  }
}
