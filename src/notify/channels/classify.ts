/**
 * The retry rules, in one place (Alertmanager's Retrier is the model): what an HTTP answer or a
 * network failure means for the outbox. 2xx ok; 429, 5xx, network errors and timeouts retryable
 * (a 429's or a 503's Retry-After honoured); every other 4xx permanent, because sending the same
 * thing again will not change the answer (and a 401, 403, 404 or 410 refuses the channel itself, so
it pauses: `wholeChannel`). A redirect is not followed (the request carries the
 * channel's secrets): it is permanent too, and its reason says where the receiver points.
 */
import { parseRetryAfter } from '../../lib/retry-after.js';
import { oneLine } from './escape.js';
import { MAX_RETRY_AFTER_MS, type SendResult } from './channel.js';

/** What is known of an HTTP answer. */
export interface HttpAnswer {
  status: number;
  /** Its headers by lower-case name: a 429's or a 503's `retry-after` and a redirect's `location` are read. */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** The start of the body, for the reason ("no_service", "invalid_payload"). */
  body?: string | null;
}

/** The first value of a header, or null. */
export function headerOf(answer: HttpAnswer, name: string): string | null {
  return [answer.headers?.[name]].flat()[0] ?? null;
}

/** Refusals of the channel itself: unauthorised, forbidden, no such receiver (a webhook removed), gone. */
const WHOLE_CHANNEL_REFUSALS: ReadonlySet<number> = new Set([401, 403, 404, 410]);

/**
 * Classifies an HTTP answer; a 2xx is ok whatever its body (only a failure's is read). `now` (ms)
 * is needed for a Retry-After given as a date.
 */
export function classifyHttpAnswer(answer: HttpAnswer, now: number): SendResult {
  const { status } = answer;
  const body = answer.body ? `: ${oneLine(answer.body, 120)}` : '';
  if (status >= 200 && status < 300) return { outcome: 'ok' };
  if (status === 429) return retryable(`rate limited (HTTP 429)${body}`, headerOf(answer, 'retry-after'), now);
  // A 503 may say when the service expects to be back (RFC 9110 §15.6.4): waited for like a 429's.
  if (status === 503) return retryable(`server error (HTTP 503)${body}`, headerOf(answer, 'retry-after'), now);
  if (status >= 500) return { outcome: 'retryable', reason: `server error (HTTP ${status})${body}` };
  // A 408 (request timeout) is the server saying "try again": treated like a network timeout.
  if (status === 408) return { outcome: 'retryable', reason: `request timeout (HTTP 408)${body}` };
  if (status >= 300 && status < 400) {
    const to = originOf(headerOf(answer, 'location'));
    return {
      outcome: 'permanent',
      reason: `redirected (HTTP ${status})${to ? ` to ${to}` : ''}: set the channel's URL to where the receiver is now`,
      wholeChannel: true,
    };
  }
  // Refused for what the channel is (its credential, its URL), not for this message: every message
  // would be, and trying each every round hammers a receiver that may lock the credential out.
  if (WHOLE_CHANNEL_REFUSALS.has(status))
    return { outcome: 'permanent', reason: `rejected (HTTP ${status})${body}`, wholeChannel: true };
  return { outcome: 'permanent', reason: `rejected (HTTP ${status})${body}` };
}

/** Where a redirect points, its scheme, host and port only: the rest of a receiver's URL may be its credential. */
function originOf(location: string | null | undefined): string | null {
  if (!location || !URL.canParse(location)) return null;
  const { origin } = new URL(location);
  return origin === 'null' ? null : oneLine(origin, 200);
}

/** A retryable answer, with the wait its Retry-After asks for (capped) when it gives a readable one. */
function retryable(reason: string, retryAfter: string | null, now: number): SendResult {
  const asked = parseRetryAfter(retryAfter, now);
  return asked === undefined
    ? { outcome: 'retryable', reason }
    : { outcome: 'retryable', reason, retryAfterMs: Math.min(asked, MAX_RETRY_AFTER_MS) };
}

/** Network error codes worth naming in a reason; all of them are retryable. */
const TIMEOUT_CODES = new Set([
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Classifies a failure where no answer came back (refused, reset, DNS, timeout): always retryable,
 * because the message may not have arrived and trying again is the only way not to lose it.
 * The reason names the code only: library messages can carry the URL, which may be a secret.
 */
export function classifyNetworkError(code: string | undefined, timeoutMs?: number): SendResult {
  if (code && TIMEOUT_CODES.has(code)) {
    return { outcome: 'retryable', reason: timeoutMs ? `timed out after ${timeoutMs} ms` : `timed out (${code})` };
  }
  return { outcome: 'retryable', reason: `network error (${code ?? 'no answer'})` };
}
