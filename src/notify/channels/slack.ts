import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ErrorCode, IncomingWebhook } from '@slack/webhook';
import { loadOnUse } from '../../lib/load-on-use.js';
import { Secret } from '../../lib/secret.js';
import type { Channel, ChannelKind, SendResult } from './channel.js';
import { classifyHttpAnswer, classifyNetworkError } from './classify.js';
import { guardedSend } from './guarded-send.js';
import { SLACK_TEMPLATE_PARTS, slackConfigSchema, type SlackConfig } from './slack-config.js';
import { renderSlack, slackRenderOptions, type SlackMessage } from './slack-render.js';

/**
 * @slack/webhook, loaded at a Slack channel's first send: it brings axios and its HTTP stack (~6 MB
 * of heap with their code), which a daemon that has sent nothing yet need not hold.
 */
const slackWebhook = loadOnUse<typeof import('@slack/webhook')>('@slack/webhook');

/** `ErrorCode.RequestError` of @slack/webhook, spelled here so that classifying needs no library. */
const WEBHOOK_REQUEST_ERROR = 'slack_webhook_request_error' satisfies `${ErrorCode.RequestError}`;

/** What an error from @slack/webhook carries; its `original` is an axios error. */
interface WebhookError {
  code?: string;
  original?: { code?: string; response?: { status: number; headers?: Record<string, unknown>; data?: unknown } };
  response?: { status: number; headers?: Record<string, unknown>; data?: unknown };
  name?: string;
}

/**
 * Classifies a failure of IncomingWebhook.send. Only status, Retry-After, the body and error codes
 * are read: messages and `original.config` contain the webhook URL, which is the credential. The
 * body is scrubbed of `secrets` before the reason cuts it: a secret cut in half would no longer be
 * found by the scrub after it.
 */
export function classifySlackError(
  err: unknown,
  timeoutMs: number,
  now: number,
  secrets: readonly Secret[] = [],
): SendResult {
  const e = (err ?? {}) as WebhookError;
  const response = e.original?.response ?? e.response;
  if (response && typeof response.status === 'number') {
    const retryAfter = response.headers?.['retry-after'];
    const body = typeof response.data === 'string' ? Secret.scrub(response.data, secrets) : undefined;
    return classifyHttpAnswer(
      { status: response.status, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, body },
      now,
    );
  }
  if (e.code === WEBHOOK_REQUEST_ERROR) return classifyNetworkError(e.original?.code, timeoutMs);
  // Thrown before anything was sent (a malformed request): sending again would fail the same way.
  return { outcome: 'permanent', reason: `could not send the request (${e.code ?? e.name ?? 'unknown error'})` };
}

/** The Slack incoming-webhook channel kind. */
export const slackChannel = {
  kind: 'slack',
  configSchema: slackConfigSchema,
  templateParts: SLACK_TEMPLATE_PARTS,
  create(config, deps): Channel<SlackMessage> {
    const url = config.webhook_url.reveal();
    // Second belt for reasons and logs: the whole URL and its path (the secret part) are scrubbed.
    const secrets = [config.webhook_url, new Secret(new URL(url).pathname + new URL(url).search)];
    const agent = url.startsWith('https:') ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    let webhook: IncomingWebhook | undefined;
    // Built at the first send (see `slackWebhook`).
    const client = (): IncomingWebhook => {
      if (webhook) return webhook;
      webhook = new (slackWebhook().IncomingWebhook)(url, {
        timeout: config.timeout,
        agent,
        ...(config.username ? { username: config.username } : {}),
        ...(config.icon_emoji ? { icon_emoji: config.icon_emoji } : {}),
      });
      // The library merges its options into every payload, and clears `agent` and `retryConfig` from
      // them itself, but not `timeout` (already given to its HTTP client): clear it the same way, so
      // no payload carries `"timeout": 10000` to Slack.
      (webhook as unknown as { defaults: { timeout?: number } }).defaults.timeout = undefined;
      return webhook;
    };
    const log = deps.logger.child({ channel: config.name, kind: 'slack' });
    return {
      name: config.name,
      kind: 'slack',
      // The webhook client aborts the request itself after `timeout`.
      sendTimeoutMs: config.timeout,
      render: (n) => renderSlack(n, slackRenderOptions(config, deps, deps.templates)),
      send: (message, signal) =>
        guardedSend({
          start: () => client().send({ text: message.text, blocks: message.blocks }),
          signal,
          peer: 'Slack',
          answered: () => ({ outcome: 'ok' }),
          failed: (err) => classifySlackError(err, config.timeout, deps.clock.now(), secrets),
          secrets,
          log,
        }),
      async close() {
        agent.destroy();
      },
    };
  },
} satisfies ChannelKind<SlackConfig, SlackMessage>;
