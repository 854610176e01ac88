/**
 * The Slack incoming-webhook channel (`type: slack`): one JSON POST per message, made as every
 * channel that speaks HTTP itself makes it (`http-post.ts`): the retry rules of `classify.ts`, a
 * 429's Retry-After honoured, the answer's body scrubbed of the webhook URL before it is a reason.
 */
import type { Channel, ChannelKind } from './channel.js';
import { postingChannel, urlSecrets } from './http-post.js';
import { SLACK_TEMPLATE_PARTS, slackConfigSchema, type SlackConfig } from './slack-config.js';
import { renderSlack, slackRenderOptions, type SlackMessage } from './slack-render.js';

/** The Slack incoming-webhook channel kind. */
export const slackChannel = {
  configSchema: slackConfigSchema,
  templateParts: SLACK_TEMPLATE_PARTS,
  create(config, deps): Channel<SlackMessage> {
    // The webhook's display name and icon, where the Slack app allows them to be overridden.
    const overrides = {
      ...(config.username ? { username: config.username } : {}),
      ...(config.icon_emoji ? { icon_emoji: config.icon_emoji } : {}),
    };
    // Second belt for reasons and logs: the whole URL and its path (the secret part) are scrubbed.
    return postingChannel(config, deps, 'Slack', urlSecrets(config.webhook_url), {
      render: (n) => renderSlack(n, slackRenderOptions(config, deps)),
      request: (message) => ({
        url: config.webhook_url.reveal(),
        // As the Slack app's posts: a link from the service (an app's URL) is never fetched by
        // Slack's crawler nor grown into a preview under our name.
        body: { ...overrides, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false },
      }),
    });
  },
} satisfies ChannelKind<SlackConfig, SlackMessage>;
