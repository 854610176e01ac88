/**
 * What a failed Slack Web API call means for the outbox (the retry rules of `classify.ts`, for
 * the Slack app channel): Slack answers HTTP 200 with `{ ok: false, error }` for most refusals, so
 * its error word decides. A rate limit (HTTP 429 with Retry-After, or `ratelimited`) and Slack's
 * own trouble are retryable; a refusal that sending again cannot change is permanent, with a
 * reason that says what to fix. Only error words, status codes and Retry-After are read: nothing a
 * library message may carry (the request, its headers) reaches a reason.
 */
import { SLACK_ERROR } from './slack-web-api-words.js';
import type { SendResult } from './channel.js';
import { classifyHttpAnswer, classifyNetworkError } from './classify.js';
import { oneLine } from './escape.js';
import type { SlackAppConfig } from './slack-app-config.js';
import { ownValue } from '../../lib/own-value.js';

/**
 * Where the failed call went, for reasons that say what to fix: as the channel's config says, its
 * name in `notify.channels`, the Slack channel ID it posts to, and the time limit of one call (ms)
 * for the reason of a timeout.
 */
export type SlackApiCallee = Pick<SlackAppConfig, 'name' | 'channel' | 'timeout'>;

/** Error words that pass by themselves (Slack's own trouble, a rate limit): the call is tried again later. */
export const PASSING_SLACK_ERRORS: ReadonlyMap<string, string> = new Map([
  ['ratelimited', 'rate limited by Slack'],
  ['rate_limited', 'rate limited by Slack'],
  ['internal_error', 'Slack had an internal error'],
  ['fatal_error', 'Slack had an internal error'],
  ['service_unavailable', 'Slack is unavailable'],
  ['request_timeout', 'Slack timed out'],
]);

/**
 * The refusals of the channel itself (its token, Slack channel or scopes), each with what to fix:
 * every message would meet them, so the channel pauses, not each message of a storm asked again.
 */
const CHANNEL_REFUSALS: Readonly<Record<string, (c: SlackApiCallee) => string>> = {
  channel_not_found: (c) =>
    `Slack has no channel ${c.channel} this app can see (channel_not_found): check the channel ID of ${c.name} in notify.channels, and invite the app to it if it is private`,
  not_in_channel: (c) =>
    `the app is not a member of channel ${c.channel} (not_in_channel): invite it there (/invite @your-app in that channel)`,
  is_archived: (c) => `channel ${c.channel} is archived (is_archived): unarchive it, or give ${c.name} another channel`,
  invalid_auth: (c) =>
    `Slack refused the bot token (invalid_auth): check bot_token of ${c.name} (the app's xoxb- token)`,
  not_authed: (c) => `no bot token reached Slack (not_authed): check bot_token of ${c.name}`,
  account_inactive: (c) =>
    `the bot token belongs to a deactivated app or user (account_inactive): reinstall the app and give ${c.name} its new bot token`,
  token_revoked: (c) =>
    `the bot token was revoked (token_revoked): reinstall the app to the workspace and give ${c.name} its new bot token`,
  token_expired: (c) => `the bot token has expired (token_expired): give ${c.name} a bot token that does not expire`,
  restricted_action: (c) =>
    `the workspace does not let this app post in ${c.channel} (restricted_action): ask a Slack admin, or give ${c.name} another channel`,
  ekm_access_denied: () => 'the workspace refuses the app (ekm_access_denied): ask a Slack admin',
  team_access_not_granted: () =>
    'the app is not granted access to this workspace (team_access_not_granted): ask a Slack admin',
};

/** The refusals of one message (its content), each as said: sending it again cannot change them. */
const MESSAGE_REFUSALS: ReadonlyMap<string, string> = new Map([
  ['invalid_blocks', 'Slack refused the message as malformed (invalid_blocks)'],
  ['invalid_attachments', 'Slack refused the message as malformed (invalid_attachments)'],
  ['msg_too_long', 'Slack refused the message as too long (msg_too_long)'],
  ['no_text', 'Slack refused the message as empty (no_text)'],
]);

/** The error word of a failed call, when Slack answered one (`channel_not_found`); undefined otherwise. */
export function slackErrorWord(err: unknown): string | undefined {
  const e = err as { code?: unknown; data?: { error?: unknown } } | null;
  if (e?.code !== SLACK_ERROR.PlatformError) return undefined;
  return typeof e.data?.error === 'string' ? e.data.error : undefined;
}

/** What the errors of @slack/web-api carry that a reason may use. */
interface WebApiError {
  code?: unknown;
  data?: { needed?: unknown; provided?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
  headers?: Record<string, unknown>;
  body?: unknown;
  original?: { name?: unknown; code?: unknown; cause?: { code?: unknown } };
  name?: unknown;
  message?: unknown;
}

/** Classifies a failure of one Web API call; `now` (ms) reads a Retry-After given as a date. */
export function classifySlackApiError(err: unknown, callee: SlackApiCallee, now: number): SendResult {
  const e = (err ?? {}) as WebApiError;
  switch (e.code) {
    case SLACK_ERROR.RateLimitedError: {
      const seconds = typeof e.retryAfter === 'number' ? String(e.retryAfter) : undefined;
      return classifyHttpAnswer({ status: 429, headers: { 'retry-after': seconds }, body: 'ratelimited' }, now);
    }
    case SLACK_ERROR.PlatformError: {
      const word = slackErrorWord(err) ?? 'unknown_error';
      const passing = PASSING_SLACK_ERRORS.get(word);
      if (passing) return { outcome: 'retryable', reason: `${passing} (${word})` };
      if (word === 'missing_scope') return missingScope(e.data?.needed, e.data?.provided);
      const ofMessage = MESSAGE_REFUSALS.get(word);
      if (ofMessage) return { outcome: 'permanent', reason: ofMessage, wholeChannel: false };
      const ofChannel = ownValue(CHANNEL_REFUSALS, word);
      if (!ofChannel) return { outcome: 'permanent', reason: `Slack refused the call (${oneLine(word, 80)})` };
      return { outcome: 'permanent', reason: ofChannel(callee), wholeChannel: true };
    }
    case SLACK_ERROR.HTTPError: {
      const status = typeof e.statusCode === 'number' ? e.statusCode : 0;
      const retryAfter = e.headers?.['retry-after'];
      const headers = { 'retry-after': typeof retryAfter === 'string' ? retryAfter : undefined };
      return classifyHttpAnswer({ status, headers, body: typeof e.body === 'string' ? e.body : null }, now);
    }
    case SLACK_ERROR.RequestError: {
      const original = e.original ?? {};
      // fetch aborts with a TimeoutError when the client's own `timeout` passes.
      if (original.name === 'TimeoutError' || original.name === 'AbortError') {
        return classifyNetworkError('ETIMEDOUT', callee.timeout);
      }
      const code = typeof original.cause?.code === 'string' ? original.cause.code : undefined;
      return classifyNetworkError(code ?? (typeof original.code === 'string' ? original.code : undefined));
    }
  }
  // A 429 without a usable Retry-After is thrown by the client as a plain Error: still a rate limit.
  if (typeof e.message === 'string' && e.message.startsWith('Retry header did not contain a valid timeout')) {
    return classifyHttpAnswer({ status: 429, body: 'ratelimited' }, now);
  }
  // Not Slack's answer: ours (the state file busy or full, a reload's abandoned send racing this
  // one). As for a channel that throws, the delivery is tried again.
  return {
    outcome: 'retryable',
    reason: `could not complete the send (${typeof e.name === 'string' ? e.name : 'unknown error'})`,
  };
}

/** A scope the app lacks, named as Slack names it, with where to add it. */
function missingScope(needed: unknown, provided: unknown): SendResult {
  const scope = typeof needed === 'string' ? oneLine(needed, 100) : 'a scope';
  const has = typeof provided === 'string' ? ` (it has: ${oneLine(provided, 200)})` : '';
  return {
    outcome: 'permanent',
    reason: `the app lacks the scope ${scope}${has} (missing_scope): add it under OAuth & Permissions and reinstall the app`,
    wholeChannel: true,
  };
}
