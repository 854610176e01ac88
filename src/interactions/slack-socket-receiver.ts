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
 *
 * Whatever comes over the WebSocket is looked at before the library reads it: a frame that is
 * binary, larger than {@link MAX_ENVELOPE_BYTES} or not a JSON object is one bad envelope, ignored and said
 * once a minute with a count (the library would ignore it silently, or parse a frame of any size);
 * an envelope of another type than `interactive` is acknowledged and ignored, said the same way;
 * a payload taken before is acknowledged again and not handed on, whatever its envelope's id (Slack
 * resends an envelope it saw no acknowledgement of in time, and a resend may come with an id of
 * its own; a click's payload carries its own trigger_id and action_ts). Nothing of what it carries
 * is logged but its size and type. The daemon runs it on a thread of its own
 * (`socket-mode-worker.ts`), so the acknowledgement never waits on the main thread.
 */
import { createHash } from 'node:crypto';
import type { SocketModeClient } from '@slack/socket-mode';
import { Backoff, LOOP_BACKOFF } from '../lib/backoff.js';
import type { Clock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import { RepeatedLog, type LineLogger } from '../lib/repeated-log.js';
import { slackErrorWord } from '../notify/channels/slack-app-classify.js';
import { slackLibraryLogger } from '../notify/channels/slack-library-logger.js';
import { ReplayMemory } from './replay-memory.js';
import type { SocketModeApp } from './socket-mode-thread.js';

/** A connection Slack closes sooner than this was not a recycling: the next one waits as after a failure. */
const STABLE_MS = 10_000;

/**
 * The largest frame read: an interaction's payload holds the message clicked, well under this (the
 * HTTP receiver takes the same at most).
 */
export const MAX_ENVELOPE_BYTES = 1024 * 1024;
/** How long a payload is remembered: a replay of it later than this is not told apart. */
const REPLAY_WINDOW_MS = 5 * 60_000;
/** The longest envelope type said in a log line; it is the peer's text. */
const TYPE_SHOWN_MAX = 40;

/** Error words of `apps.connections.open` that no wait will mend: the token. */
const TOKEN_REFUSED = new Set([
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'not_allowed_token_type',
]);

/** What a Socket Mode receiver works with. */
export interface SocketReceiverOptions extends SocketModeApp {
  /** An interaction's payload, after its envelope was acknowledged. */
  onPayload: (payload: unknown) => void;
  clock: Clock;
  log: ReceiverLog;
  /** The backoff's jitter (uniform in [0, 1)); default Math.random. */
  random?: () => number;
}

/** Where a receiver says what it does: the daemon's logger, or the Socket Mode thread's stand-in for it. */
export interface ReceiverLog extends LineLogger {
  info(fields: Record<string, unknown>, msg: string): void;
}

/** A Socket Mode envelope as the library hands it on. */
interface Envelope {
  ack: () => Promise<void>;
  type: string;
  body: unknown;
}

/** One Socket Mode connection, kept up until stopped. */
export class SocketReceiver {
  readonly #stop = new AbortController();
  #client: SocketModeClient | undefined;
  #running: Promise<void> | undefined;
  /** Bad envelopes, said once a minute with a count: a peer that sends many fills no log. */
  readonly #bad: RepeatedLog;
  readonly #taken = new ReplayMemory();

  constructor(private readonly o: SocketReceiverOptions) {
    this.#bad = new RepeatedLog(o.log, { clock: o.clock });
  }

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
    // The loops' own: 1 s doubling to 1 min.
    const backoff = new Backoff({ ...LOOP_BACKOFF, random: this.o.random });
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
      this.#gate(client);
      client.on('slack_event', (e: Envelope) => this.#envelope(e));
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
          wait = LOOP_BACKOFF.capMs;
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

  /**
   * Puts a look at each frame before the library's own reading of it (which it binds to
   * `ws_message` when built): a frame it should not parse is said and dropped here.
   */
  #gate(client: SocketModeClient): void {
    const read = client.listeners('ws_message') as ((data: unknown, isBinary: boolean) => unknown)[];
    client.removeAllListeners('ws_message');
    client.on('ws_message', (data: unknown, isBinary: boolean) => {
      const why = frameFault(data, isBinary);
      if (why) {
        this.#bad.warn({ reason: why.reason, bytes: why.bytes }, `a Socket Mode envelope was ignored: ${why.text}`);
        return;
      }
      for (const r of read) void r(data, isBinary);
    });
  }

  /** Acknowledges an envelope at once, then hands on an interaction not taken before. */
  #envelope(e: Envelope): void {
    const now = this.o.clock.now();
    const digest = createHash('sha256')
      .update(JSON.stringify(e.body ?? null))
      .digest('hex');
    const again = this.#taken.seen(digest, now + REPLAY_WINDOW_MS, now);
    e.ack()
      .catch((err: unknown) => this.o.log.warn({ error: errorText(err) }, 'cannot acknowledge a Socket Mode envelope'))
      .finally(() => {
        if (e.type !== 'interactive') {
          const type = String(e.type).slice(0, TYPE_SHOWN_MAX);
          this.#bad.warn(
            { reason: 'type', type },
            'a Socket Mode envelope of another type than a button click was acknowledged and ignored',
            type,
          );
        } else if (again) {
          this.#bad.warn(
            { reason: 'replayed' },
            'a Socket Mode envelope taken before came again: acknowledged, ignored',
          );
        } else this.o.onPayload(e.body);
      });
  }
}

/** Why a WebSocket frame is not an envelope to read, or undefined when it may be one. */
function frameFault(data: unknown, isBinary: boolean): { reason: string; bytes: number; text: string } | undefined {
  if (isBinary || typeof data !== 'string') {
    const bytes = data instanceof ArrayBuffer ? data.byteLength : 0;
    return { reason: 'binary', bytes, text: 'a binary frame, where Slack sends JSON text' };
  }
  const bytes = Buffer.byteLength(data);
  if (bytes > MAX_ENVELOPE_BYTES)
    return { reason: 'too_large', bytes, text: `larger than ${MAX_ENVELOPE_BYTES} bytes, not read` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return { reason: 'not_json', bytes, text: 'not JSON' };
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return undefined;
  return { reason: 'not_object', bytes, text: 'JSON, but not an object as an envelope is' };
}
