/**
 * The Slack app channel (`type: slack_app`): a bot token and a channel ID, through Slack's Web API
 * (`@slack/web-api`). One living message per alert group, updated in place, its history in its
 * thread (`slack-app-sender.ts`); the link kept in the state (`slack-app-link-store.ts`, migration 010).
 *
 * The client never retries by itself and never waits out a rate limit: the outbox does both
 * (`retryConfig: { retries: 0 }`, `rejectRateLimitedCalls`), so a 429's Retry-After pauses the
 * channel as for every other kind. Its log lines reach ours at warn and error only, scrubbed of
 * the token (its debug lines hold whole requests). The token is sent in a header, never logged,
 * stored or shown.
 */
import type { WebClient } from '@slack/web-api';
import { Agent, fetch as undiciFetch } from '../../lib/undici-core.js';
import { z } from 'zod';
import { Secret } from '../../lib/secret.js';
import { errorText } from '../../lib/error-text.js';
import type { Channel, ChannelDeps, ChannelKind, Notification, SendResult } from './channel.js';
import { resultGuard } from './guarded-send.js';
import { livingControls } from './slack-app-buttons.js';
import { classifySlackApiError, slackErrorWord } from './slack-app-classify.js';
import { slackAppConfigSchema, type SlackAppConfig } from './slack-app-config.js';
import { SLACK_TEMPLATE_PARTS } from './slack-config.js';
import { SlackAppLinkStore } from './slack-app-link-store.js';
import { livingDelivery } from './slack-app-render.js';
import { slackLibraryLogger } from './slack-library-logger.js';
import {
  LivingMessages,
  MAX_CALLS_PER_SEND,
  SlackAnswerError,
  type LivingMessageView,
  type SlackAppDelivery,
} from './slack-app-sender.js';
import { renderSlack, slackRenderOptions, type SlackRenderOptions } from './slack-render.js';

/** Alerts a living message lists when the composition root does not say (`notify.max_items_per_message`'s default). */
const DEFAULT_MAX_ITEMS = 10;

const membersAnswer = z.object({ users: z.array(z.string()) });

const authAnswer = z.object({
  team: z.string().optional(),
  user_id: z.string().optional(),
  bot_id: z.string().optional(),
});

/**
 * A Slack app channel: a channel, and where the interactions (buttons) find an alert's living
 * message and have it shown again after an action.
 */
export interface SlackAppChannel extends Channel<SlackAppDelivery> {
  /** What a message of this channel clicked in Slack (its channel ID and ts) is about; undefined when not one of its living messages. */
  livingMessageAt(slackChannel: string, ts: string): LivingMessageView | undefined;
  /**
   * Renders an alert's living message again from the state, with `note` (what was just done, by
   * whom) kept on it, and updates it in Slack. Never throws.
   */
  refresh(fingerprint: string, note?: string, signal?: AbortSignal): Promise<SendResult>;
  /**
   * The user IDs of a Slack user group's members (`usergroups.users.list`, with the bot token: the
   * app needs `usergroups:read`), for who may click what. Throws an error that says what failed,
   * never the token.
   */
  usergroupMembers(usergroup: string): Promise<string[]>;
}

/** The Slack app channel kind. */
export const slackAppChannel = {
  configSchema: slackAppConfigSchema,
  templateParts: SLACK_TEMPLATE_PARTS,
  create(config: SlackAppConfig, deps: ChannelDeps): SlackAppChannel {
    const log = deps.logger.child({ channel: config.name, kind: 'slack_app' });
    const secrets = [config.bot_token];
    // Its own connections, so that close() ends them.
    const agent = new Agent();
    // Made at the first call: the library is loaded only by a daemon that has a Slack app channel.
    let made: Promise<WebClient> | undefined;
    const call = async (method: string, args: Record<string, unknown>): Promise<unknown> => {
      made ??= import('@slack/web-api').then(
        ({ WebClient }) =>
          new WebClient(config.bot_token.reveal(), {
            slackApiUrl: config.api_url,
            logger: slackLibraryLogger(log, secrets, '@slack/web-api'),
            retryConfig: { retries: 0 },
            rejectRateLimitedCalls: true,
            timeout: config.timeout,
            // Safe: undici's fetch takes what the client gives global fetch, and answers a WHATWG Response.
            fetch: ((url: string | URL, init?: object) =>
              undiciFetch(url, { ...init, dispatcher: agent } as Parameters<typeof undiciFetch>[1])) as never,
          }),
      );
      return (await made).apiCall(method, args);
    };
    const renderOptions = (): SlackRenderOptions => slackRenderOptions(config, deps);
    const living = new LivingMessages({
      name: config.name,
      slackChannel: config.channel,
      call,
      links: deps.store ? new SlackAppLinkStore(deps.store) : undefined,
      clock: deps.clock,
      log,
      maxItems: deps.maxItemsPerMessage ?? DEFAULT_MAX_ITEMS,
      renderOptions,
      // The console's address and the remedy lookup are the deps' own (OfferSettings picks them).
      controls: (alerts) => livingControls(alerts, { ...deps, interactions: config.interactions }),
    });
    const guarded = resultGuard({
      peer: 'Slack',
      failed: (err) =>
        err instanceof SlackAnswerError
          ? { outcome: 'retryable', reason: err.message }
          : classifySlackApiError(err, config, deps.clock.now()),
      secrets,
      log,
    });
    return {
      kind: 'slack_app',
      // A living message shows who has the alert, as PagerDuty's and Grafana OnCall's Slack messages do.
      showsAcknowledgements: true,
      // The same message: a remediation's start is one more line in the alert's thread.
      showsProgress: true,
      // Each call ends by the client's own timeout; one send makes at most this many.
      sendTimeoutMs: config.timeout * MAX_CALLS_PER_SEND,
      render: (n) => renderDelivery(n, config, renderOptions()),
      send: (delivery, signal) => guarded(() => living.deliver(delivery, signal), signal),
      verify: (signal) =>
        guarded(async () => {
          const me = authAnswer.parse(await call('auth.test', {}));
          log.info({ team: me.team, bot: me.bot_id ?? me.user_id }, 'Slack accepted the bot token');
          return { outcome: 'ok' };
        }, signal),
      livingMessageAt: (slackChannel, ts) => living.messageAt(slackChannel, ts),
      refresh: (fingerprint, note, signal) => guarded(() => living.refresh(fingerprint, note), signal),
      async usergroupMembers(usergroup) {
        try {
          return membersAnswer.parse(await call('usergroups.users.list', { usergroup })).users;
        } catch (err) {
          const why = slackErrorWord(err) ?? Secret.scrub(errorText(err), secrets);
          const hint = why === 'missing_scope' ? ' (the app needs the usergroups:read scope)' : '';
          throw new Error(`usergroups.users.list for ${usergroup} failed: ${why}${hint}`);
        }
      },
      async close() {
        await agent.destroy();
      },
    };
  },
} satisfies ChannelKind<SlackAppConfig, SlackAppDelivery>;

/** What the channel will deliver: the thread reply (or lone message) rendered, the living message's part kept as data. */
function renderDelivery(n: Notification, config: SlackAppConfig, options: SlackRenderOptions): SlackAppDelivery {
  const reply = renderSlack(n, options);
  if (n.type === 'notice')
    return { type: 'notice', fingerprint: n.fingerprint, note: n.title, reply, threadOnly: n.threadOnly === true };
  const living = livingDelivery(n);
  const broadcast: readonly string[] = config.broadcast;
  return { type: 'alerts', ...living, reply, broadcast: living.events.some((e) => broadcast.includes(e.kind)) };
}
