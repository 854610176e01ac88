import { z } from 'zod';
import { secretUrlSchema } from '../../config/secret.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** What a Slack message's template shapes (both kinds): its header (the message), what it says of each alert, and a notice's header (`notice_title`). */
export const SLACK_TEMPLATE_PARTS: TemplateParts = { title: 'message', text: 'event', notice_title: 'notice' };

/**
 * A mention added to messages with a firing critical alert, e.g. `{ critical: '<!here>' }`, in
 * the environments listed (default production: a critical staging failure pages nobody). The
 * only place a mention can come from is this config: everything from the API is escaped. Shared
 * by both Slack channel kinds.
 */
export const slackMentionSchema = z.strictObject({
  critical: z.string().min(1).max(200).optional(),
  environment_types: z.array(z.string().min(1)).min(1).default(['production']),
});

/** How long to wait for Slack's answer to one request, in milliseconds; no answer in time is retryable. */
export const slackTimeoutSchema = z.number().int().min(100).max(120_000).default(10_000);

/** Config of a Slack incoming-webhook channel. */
export const slackConfigSchema = kindConfigSchema('slack', {
  /** The incoming-webhook URL; a Slack webhook URL is itself the credential, so a Secret. */
  webhook_url: secretUrlSchema,
  /** Overrides the webhook's display name, where the Slack app allows it. */
  username: z.string().min(1).max(80).optional(),
  /** Overrides the webhook's icon, e.g. `:rotating_light:`. */
  icon_emoji: z
    .string()
    .regex(/^:[a-z0-9_+-]+:$/, 'must look like :emoji_name:')
    .optional(),
  mention: slackMentionSchema.optional(),
  timeout: slackTimeoutSchema,
  template: templateConfigSchema(SLACK_TEMPLATE_PARTS),
});

/** A parsed Slack channel config (the webhook URL as a Secret). */
export type SlackConfig = z.infer<typeof slackConfigSchema>;
