/**
 * One send through a channel with a time limit on the injected clock. Never throws: a render bug
 * is permanent, a throw from the channel or no answer in time is retryable. Shared by the
 * delivery loop and `notify-test`.
 */
import type { Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import { raceAbort } from '../lib/race-abort.js';
import type { Channel, Notification, SendResult } from './channels/channel.js';

/** Added to a channel's own limit, so its timeout answers before ours would. */
export const SEND_MARGIN_MS = 2_000;

/**
 * The time limit of one send through `channel`: `notify.delivery.timeout`, raised to the
 * channel's own limit plus {@link SEND_MARGIN_MS} when that is longer. This is the design that
 * cannot go wrong whatever the config says: the loop never abandons a send the channel's library
 * is still making, so a slow but successful relay gets each message once, not once per attempt.
 */
export function sendLimitMs(channel: Pick<Channel, 'sendTimeoutMs'>, configuredMs: number): number {
  return channel.sendTimeoutMs > 0 ? Math.max(configuredMs, channel.sendTimeoutMs + SEND_MARGIN_MS) : configuredMs;
}

/** What the time limit of a send aborts it with, told apart from the caller's stop. */
const TIMED_OUT = Symbol('timed out');

/** Options of {@link sendWithTimeout}. */
export interface SendOptions {
  clock: Clock;
  /** `notify.delivery.timeout`; the channel's own limit may raise it (see {@link sendLimitMs}). */
  timeoutMs: number;
  /** Aborts the send early (shutdown); answered as retryable. */
  signal?: AbortSignal | undefined;
}

/** Renders and sends one notification; answers the channel's SendResult or a timeout. */
export async function sendWithTimeout(
  channel: Channel,
  notification: Notification,
  options: SendOptions,
): Promise<SendResult> {
  let rendered: unknown;
  try {
    rendered = channel.render(notification);
  } catch (err) {
    return { outcome: 'permanent', reason: `cannot render the message (${errorName(err)})` };
  }
  const timeoutMs = sendLimitMs(channel, options.timeoutMs);
  // One signal for the send: aborted by our time limit on the clock, or by the caller's (a stop).
  const limit = clockTimeout(options.clock, timeoutMs, () => TIMED_OUT, options.signal);
  try {
    return await raceAbort(channel.send(rendered, limit.signal), limit.signal, (why): SendResult => ({
      outcome: 'retryable',
      reason: why === TIMED_OUT ? `no answer within ${timeoutMs} ms` : 'stopped before an answer came',
    }));
  } catch (err) {
    // The channel's own error text may carry its URL (a secret): only the error's name is kept.
    return { outcome: 'retryable', reason: `send failed (${errorName(err)})` };
  } finally {
    limit.dispose();
  }
}

function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.name : typeof err;
}
