/**
 * What every channel's `send` does around its library call, in one place: refuse to start once
 * stopped, stop waiting when the signal fires, turn the answer or the error into a SendResult,
 * and scrub the channel's secrets from a failure's reason before it is logged or stored.
 */
import type { Logger } from '../../lib/logger.js';
import { Secret } from '../../lib/secret.js';
import type { SendResult } from './channel.js';
import { raceAbort } from '../../lib/race-abort.js';

/** What the wait for a send answers when the signal fired first. */
const ABORTED = Symbol('aborted');

/** One library call, and how its outcome reads. */
export interface GuardedSend<T> {
  /** Starts the library call (a webhook POST, an SMTP conversation). */
  start: () => Promise<T>;
  signal: AbortSignal | undefined;
  /** Who would have answered, for the reason of an abort: "Slack", "the SMTP server". */
  peer: string;
  /** The result of an answer that came. */
  answered: (value: T) => SendResult;
  /** The result of a failure (the library threw). */
  failed: (err: unknown) => SendResult;
  /** Scrubbed from every reason: a webhook URL, an SMTP password. */
  secrets: readonly Secret[];
  /** The channel's logger; a failure is logged at debug (the delivery loop logs it too). */
  log: Logger;
}

/** Runs one send as described by `g`. Never throws. */
export async function guardedSend<T>(g: GuardedSend<T>): Promise<SendResult> {
  if (g.signal?.aborted) return { outcome: 'retryable', reason: 'aborted before sending' };
  let result: SendResult;
  try {
    // Stops waiting as soon as the signal fires, so a stopping daemon does not wait on a slow Slack
    // or SMTP server; the work itself runs on until its own timeout (nodemailer takes no signal).
    const value = await raceAbort<T, typeof ABORTED>(g.start(), g.signal, () => ABORTED);
    result =
      value === ABORTED ? { outcome: 'retryable', reason: `aborted before ${g.peer} answered` } : g.answered(value);
  } catch (err) {
    result = g.failed(err);
  }
  if (result.outcome === 'ok') return result;
  const scrubbed = { ...result, reason: Secret.scrub(result.reason, g.secrets) };
  g.log.debug({ outcome: scrubbed.outcome, reason: scrubbed.reason }, 'delivery failed');
  return scrubbed;
}

/**
 * The guard of a channel whose calls answer their SendResult themselves (an HTTP channel's, the
 * Slack app's): each send run by {@link guardedSend} with the channel's peer, failures and secrets.
 */
export function resultGuard(g: Omit<GuardedSend<SendResult>, 'start' | 'signal' | 'answered'>) {
  return (start: () => Promise<SendResult>, signal: AbortSignal | undefined): Promise<SendResult> =>
    guardedSend({ ...g, start, signal, answered: (result) => result });
}
