/**
 * The heartbeat: after each healthy cycle, a GET to an outside dead man's switch (a
 * healthchecks.io-style ping URL), at most once per `every`. If the watchdog stops, hangs or keeps
 * failing, the pings stop and the outside service tells someone. So they do while no channel can
 * deliver (`held`): a watchdog that reads well but reaches no one is not fine, which is why
 * Alertmanager's own Watchdog alert goes through its receivers. The ping never blocks the cycle,
 * and the URL (it is the credential of the check) never appears in logs.
 */
import { request, type Dispatcher } from '../lib/undici-core.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { Secret } from '../lib/secret.js';
import type { Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import type { HeartbeatSettings } from './notify-settings.js';

/** Time limit of one ping. */
const TIMEOUT_MS = 10_000;

/** What the heartbeat needs. */
export interface HeartbeatOptions {
  settings: HeartbeatSettings;
  clock: Clock;
  logger?: Logger;
  /** undici dispatcher (a proxy agent, or tests' own); the global one when absent. */
  dispatcher?: Dispatcher;
  /** Why no message can get out now (every channel failing with messages waiting), if so. */
  held?: () => string | undefined;
}

/** Why a beat did or did not ping, named. */
export type BeatDecision = 'pinged' | 'not_due' | 'in_flight' | 'held';

/** Pings the dead man's switch after healthy cycles. */
export class Heartbeat {
  #lastAt: number | undefined;
  #inFlight: Promise<void> | undefined;
  /** Why the last due beat was held, so that holding and letting go are each said once. */
  #heldFor: string | undefined;
  readonly #log: Logger;

  constructor(private readonly options: HeartbeatOptions) {
    this.#log = (options.logger ?? silentLogger).child({ stage: 'heartbeat' });
  }

  /**
   * Call after a healthy cycle. Starts a ping in the background when `every` has passed since the
   * last one (counted from its start, so a failing endpoint is not hammered) and returns at once.
   */
  beat(): BeatDecision {
    const now = this.options.clock.now();
    if (this.#inFlight) return 'in_flight';
    // Last pinged "after" now: the clock went back since, and waiting for then would add the step.
    const since = this.#lastAt === undefined ? Infinity : now - this.#lastAt;
    if (since >= 0 && since < this.options.settings.every) return 'not_due';
    const held = this.options.held?.();
    if (held !== this.#heldFor) {
      if (held) this.#log.warn({ reason: held }, "heartbeat held: the dead man's switch will tell someone");
      else this.#log.info('heartbeat pings again: a channel delivers');
      this.#heldFor = held;
    }
    if (held) return 'held';
    this.#lastAt = now;
    this.#inFlight = this.#ping().finally(() => {
      this.#inFlight = undefined;
    });
    return 'pinged';
  }

  /** Waits for a ping in flight (for shutdown and tests); never throws. */
  async settle(): Promise<void> {
    await this.#inFlight;
  }

  async #ping(): Promise<void> {
    const { settings, clock, dispatcher } = this.options;
    const limit = clockTimeout(clock, TIMEOUT_MS, () => new Error(`no answer within ${TIMEOUT_MS} ms`));
    try {
      const res = await request(settings.url.reveal(), {
        method: 'GET',
        signal: limit.signal,
        headers: { 'user-agent': 'deploy-watchdog' },
        ...(dispatcher ? { dispatcher } : {}),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) this.#log.debug('heartbeat sent');
      else this.#log.warn({ status: res.statusCode }, 'heartbeat ping refused');
    } catch (err) {
      this.#log.warn({ err: describe(err, settings.url) }, 'heartbeat ping failed');
    } finally {
      limit.dispose();
    }
  }
}

/** An error as a line that cannot carry the URL: its code or name, and its message scrubbed. */
function describe(err: unknown, url: Secret): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : 'error';
  const message = typeof e?.message === 'string' ? Secret.scrub(e.message, [url]) : '';
  // Also cut anything that looks like a URL: a library may print it re-encoded.
  return `${code}${message ? `: ${message.replace(/https?:\/\/\S+/g, '<url>')}` : ''}`;
}
