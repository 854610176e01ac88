/**
 * One send through a channel with a time limit on the injected clock. Never throws: a render bug
 * is permanent, a throw from the channel or no answer in time is retryable. Shared by the
 * delivery loop and `notify-test`.
 */
import type { Clock } from '../lib/clock.js';
import type { Channel, Notification, SendResult } from './channels/channel.js';

/** Options of {@link sendWithTimeout}. */
export interface SendOptions {
  clock: Clock;
  timeoutMs: number;
  /** Aborts the send early (shutdown); answered as retryable. */
  signal?: AbortSignal | undefined;
}

/** Renders and sends one notification; answers the channel's SendResult or a timeout. */
export async function sendWithTimeout(channel: Channel, notification: Notification, options: SendOptions): Promise<SendResult> {
  let rendered: unknown;
  try {
    rendered = channel.render(notification);
  } catch (err) {
    return { outcome: 'permanent', reason: `cannot render the message (${errorName(err)})` };
  }
  const { clock, timeoutMs, signal: outer } = options;
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
