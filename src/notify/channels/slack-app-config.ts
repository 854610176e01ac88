import { z } from 'zod';
import { secretSchema } from '../../config/secret.js';
import { SLACK_TEMPLATE_PARTS, slackMentionSchema, slackTimeoutSchema } from './slack-config.js';
import { secureUrlSchema } from './on-call-config.js';
import { templateConfigSchema } from './template-config.js';
import { slackInteractionsSchema } from './slack-interactions-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** Slack's Web API root, where `api_url` points unless a test points it elsewhere. */
export const SLACK_API_URL = 'https://slack.com/api/';

/** The event kinds a thread reply is also shown in the channel for, unless the config says otherwise. */
export const DEFAULT_BROADCAST = ['firing', 'escalated'] as const;

/**
 * What people put where the bot token goes: a webhook URL, an app-level token, a user
 * or other token. Only these are refused, not everything but `xoxb-`, so `validate`'s stand-in for
 * an unset ${VAR} still passes.
 */
const NOT_A_BOT_TOKEN = /^(https?:|xapp-|xox[a-ac-z]-|xoxe)/i;

/**
 * Config of a Slack app channel: a bot token and a channel ID, one living message per alert group
 * (posted once, updated in place, its history in its thread).
 */
export const slackAppConfigSchema = kindConfigSchema('slack_app', {
  /** The app's bot token (`xoxb-...`, use ${VAR}): a Secret, never shown, logged or stored. */
  bot_token: secretSchema.refine(
    (s) => !NOT_A_BOT_TOKEN.test(s.reveal().trim()),
    "must be the app's Bot User OAuth Token (xoxb-…, from OAuth & Permissions); a webhook URL goes in a channel of type: slack (webhook_url), an app-level token (xapp-…) in interactions.app_token",
  ),
  /**
   * The channel's ID (`C0123ABCD`; a private channel's may start with G): an ID, not a `#name`,
   * because updating a message and finding one after a crash both need it.
   */
  channel: z
    .string()
    .regex(
      /^[CGD][A-Z0-9]{2,}$/,
      'must be a channel ID like C0123ABCD (in Slack: the channel details, at the bottom), not a #name',
    ),
  /**
   * The Web API root; Slack's own unless a test or a proxy says otherwise. https, or http on
   * loopback only: the bot token and the app token are sent with every call.
   */
  api_url: secureUrlSchema('the tokens').default(SLACK_API_URL),
  /**
   * The event kinds whose thread reply is also sent to the channel (`reply_broadcast`), so that
   * news joining an open message is seen: a new alert and an escalation by default. `[]`: every
   * later event stays in the thread.
   */
  broadcast: z.array(z.enum(['firing', 'repeat', 'escalated', 'resolved'])).default([...DEFAULT_BROADCAST]),
  mention: slackMentionSchema.optional(),
  timeout: slackTimeoutSchema,
  /**
   * How clicks on the living message's buttons reach the daemon (Socket Mode or HTTP) and who
   * may do what. Absent: no action buttons.
   */
  interactions: slackInteractionsSchema.optional(),
  template: templateConfigSchema(SLACK_TEMPLATE_PARTS),
});

/** A parsed Slack app channel config (the bot token as a Secret). */
export type SlackAppConfig = z.infer<typeof slackAppConfigSchema>;
