/**
 * Clicks over Socket Mode (`@slack/socket-mode`): the daemon asks Slack for a WebSocket address
 * with the app-level token (`apps.connections.open`) and connects out, so it needs no public
 * address. Each envelope is acknowledged at once (Slack wants it within 3 seconds, and would
 * otherwise tell the person the app did not answer), then an `interactive` one is handed on.
 *
 * The library's own reconnection is off: a failed reconnect of its rejects a promise nobody awaits,
 * which would end the process. This loop connects instead: again at once after Slack closes a
 * connection (it recycles them every few hours), after a growing wait (`lib/backoff.ts`: 1 s
 * doubling, at most 1 min, with jitter, on the clock) after a failure or a connection closed at once; a refused token is said once as an error naming what to fix, and
 * tried again at the longest wait (a token rotated by hand works without a restart).
 */
import type { SocketModeClient } from '@slack/socket-mode';
import type { Secret } from '../config/secret.js';
import { Backoff } from '../lib/backoff.js';
import type { Clock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { Logger } from '../lib/logger.js';
import { slackErrorWord } from '../notify/channels/slack-app-classify.js';
import { slackLibraryLogger } from '../notify/channels/slack-library-logger.js';

/** The first wait after a failed connection, doubling up to {@link MAX_WAIT_MS}. */
const FIRST_WAIT_MS = 1_000;
const MAX_WAIT_MS = 60_000;
/** A connection Slack closes sooner than this was not a recycling: the next one waits as after a failure. */
const STABLE_MS = 10_000;

/** Error words of `apps.connections.open` that no wait will mend: the token. */
const TOKEN_REFUSED = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'not_allowed_token_type',
]);

/** What a Socket Mode receiver works with. */
export interface SocketReceiverOptions {
  /** The app-level token (`xapp-…`). */
  appToken: Secret;
  /** The Web API root `apps.connections.open` is asked at. */
  apiUrl: string;
  /** The channels (names) whose clicks come this way, for the log. */
  channels: readonly string[];
  /** An interaction's payload, after its envelope was acknowledged. */
  onPayload: (payload: unknown) => void;
  clock: Clock;
  log: Logger;
  /** The backoff's jitter (uniform in [0, 1)); default Math.random. */
  random?: () => number;
}

/** One Socket Mode connection, kept up until stopped. */
export class SocketReceiver {
  readonly #stop = new AbortController();
  #client: SocketModeClient | undefined;
  #running: Promise<void> | undefined;

  constructor(private readonly o: SocketReceiverOptions) {}

  /** Connects, in the background; returns at once. */
  start(): void {
    this.#running ??= this.#loop();
  }

  /** Closes the connection and ends the loop. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#client?.disconnect().catch(() => undefined);
    await this.#running;
  }

  async #loop(): Promise<void> {
    const { log, clock } = this.o;
    const signal = this.#stop.signal;
    const backoff = new Backoff({ baseMs: FIRST_WAIT_MS, capMs: MAX_WAIT_MS, random: this.o.random });
    let told = false;
    // Loaded here: only a daemon whose Slack app takes clicks over Socket Mode needs the library.
    const { SocketModeClient } = await import('@slack/socket-mode');
    while (!signal.aborted) {
      const client = new SocketModeClient({
        appToken: this.o.appToken.reveal(),
        autoReconnectEnabled: false,
        logger: slackLibraryLogger(log, [this.o.appToken], '@slack/socket-mode'),
        clientOptions: { slackApiUrl: this.o.apiUrl, retryConfig: { retries: 0 } },
      });
      this.#client = client;
      const closed = new Promise<void>((resolve) => client.once('disconnected', () => resolve()));
      client.on('slack_event', (e: { ack: () => Promise<void>; type: string; body: unknown }) => this.#envelope(e));
      let wait: number;
      try {
        await client.start();
        if (signal.aborted) break;
        told = false;
        const connectedAt = clock.now();
        log.info({ channels: this.o.channels }, 'Slack Socket Mode connected: button clicks come this way');
        await closed;
        if (signal.aborted) break;
        // A connection that lasted is Slack recycling it: again at once. One closed as soon as it
        // opened counts as a failure, so a peer that keeps doing so is not asked in a tight loop.
        const lasted = clock.now() - connectedAt >= STABLE_MS;
        if (lasted) backoff.reset();
        wait = lasted ? 0 : backoff.failed();
        log.info({ retryInMs: wait }, 'Slack closed the Socket Mode connection; connecting again');
      } catch (err) {
        if (signal.aborted) break;
        const word = slackErrorWord(err);
        if (word && TOKEN_REFUSED.has(word)) {
          wait = MAX_WAIT_MS;
          if (!told) {
            log.error(
              { error: word, channels: this.o.channels },
              'Slack refused the app-level token for Socket Mode: no button click can reach the daemon; check interactions.app_token (an xapp- token with connections:write, of the app whose buttons these are)',
            );
          }
          told = true;
        } else {
          wait = backoff.failed();
          log.warn(
            { error: word ?? errorText(err), failures: backoff.failures, retryInMs: wait },
            'cannot connect to Slack over Socket Mode; trying again',
          );
        }
      } finally {
        client.removeAllListeners('slack_event');
      }
      if (wait > 0) await clock.sleep(wait, signal).catch(() => undefined);
    }
  }

  /** Acknowledges an envelope at once, then hands on an interaction. */
  #envelope(e: { ack: () => Promise<void>; type: string; body: unknown }): void {
    e.ack()
      .catch((err: unknown) => this.o.log.warn({ error: errorText(err) }, 'cannot acknowledge a Socket Mode envelope'))
      .finally(() => {
        if (e.type === 'interactive') this.o.onPayload(e.body);
      });
  }
}
