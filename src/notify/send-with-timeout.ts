/**
 * One send through a channel with a time limit on the injected clock. Never throws: a render bug
 * is permanent, a throw from the channel or no answer in time is retryable. Shared by the
 * delivery loop and `notify-test`.
 */
import type { Clock } from '../lib/clock.js';
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
  const { clock, signal: outer } = options;
  const timeoutMs = sendLimitMs(channel, options.timeoutMs);
  const ac = new AbortController();
  const onOuter = () => ac.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  outer?.addEventListener('abort', onOuter, { once: true });
  try {
    return await new Promise<SendResult>((resolve) => {
      channel.send(rendered, ac.signal).then(resolve, (err: unknown) =>
        // The channel's own error text may carry its URL (a secret): only the error's name is kept.
        resolve({ outcome: 'retryable', reason: `send failed (${errorName(err)})` }),
      );
      clock.sleep(timeoutMs, ac.signal).then(
        () => resolve({ outcome: 'retryable', reason: `no answer within ${timeoutMs} ms` }),
        () => resolve({ outcome: 'retryable', reason: 'stopped before an answer came' }),
      );
    });
  } finally {
    outer?.removeEventListener('abort', onOuter);
    ac.abort();
  }
}

function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.name : typeof err;
}
