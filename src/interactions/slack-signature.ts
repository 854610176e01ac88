/**
 * Slack's request signing ("Verifying requests from Slack"): every request Slack sends carries
 * `X-Slack-Request-Timestamp` and `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
 * `v0:{timestamp}:{raw body}` keyed with the app's signing secret. A request is taken only when
 * its signature matches (compared in constant time) and its timestamp is within five minutes of
 * ours, so a captured request cannot be replayed later. Pure; the secret never leaves here.
 */
import { createHmac } from 'node:crypto';
import { sameText } from '../lib/same-text.js';
import type { Secret } from '../lib/secret.js';

/** How far a request's timestamp may be from our clock, either way (Slack's own advice). */
export const SIGNATURE_MAX_AGE_MS = 5 * 60_000;

/**
 * A signing secret as this reads it: a config's `Secret`, or the plain text the listener's thread
 * was given (it has no `Secret` class: it loads nothing of the daemon's but this).
 */
export type SigningSecret = Pick<Secret, 'reveal'>;

/** The version prefix of the signatures this checks. */
const VERSION = 'v0';

/** What a check of a request found, named. */
export type SignatureCheck =
  /** Signed with the secret at `index` of those given. */
  | { ok: true; index: number }
  | { ok: false; reason: 'unsigned' | 'stale_timestamp' | 'bad_signature'; message: string };

/** The signature Slack sends for a body at a timestamp: `v0=` and 64 hex digits. */
export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `${VERSION}=${createHmac('sha256', secret).update(`${VERSION}:${timestamp}:${body}`).digest('hex')}`;
}

/**
 * Checks a request (its two headers, as sent or absent, and its raw body) against the signing
 * secrets of the apps that may send it (one per Slack app configured), at `now` (ms). Never says
 * which part of the signature differed.
 */
export function verifySlackRequest(
  request: { timestamp: string | undefined; signature: string | undefined; body: string },
  secrets: readonly SigningSecret[],
  now: number,
): SignatureCheck {
  const { timestamp, signature, body } = request;
  if (!timestamp || !signature) {
    return { ok: false, reason: 'unsigned', message: 'no X-Slack-Request-Timestamp or X-Slack-Signature header' };
  }
  const seconds = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  if (!Number.isFinite(seconds) || Math.abs(now - seconds * 1000) > SIGNATURE_MAX_AGE_MS) {
    return {
      ok: false,
      reason: 'stale_timestamp',
      message: 'the request timestamp is more than 5 minutes from our clock (a replay, or a clock far off)',
    };
  }
  for (const [index, secret] of secrets.entries()) {
    if (sameText(signature, slackSignature(secret.reveal(), timestamp, body))) return { ok: true, index };
  }
  return { ok: false, reason: 'bad_signature', message: 'the signature does not match the signing secret' };
}
