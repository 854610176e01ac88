import { z } from 'zod';
import { secretUrlSchema } from '../../config/secret.js';
import { onCallTimeoutSchema } from './on-call-config.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** What a Discord message's template shapes: its first line (the message), what each alert's embed says above its facts, and a notice's title. */
export const DISCORD_TEMPLATE_PARTS: TemplateParts = { title: 'message', text: 'event', notice_title: 'notice' };

/** A Discord ID (a snowflake): digits. */
const snowflake = z.string().regex(/^\d{15,21}$/, 'must be a Discord ID (15 to 21 digits; Copy ID in developer mode)');

/** Config of a Discord channel: a channel's webhook, messages with embeds. */
export const discordConfigSchema = kindConfigSchema('discord', {
  webhook_url: secretUrlSchema.describe("The channel webhook's URL (its token is the credential); a secret."),
  username: z
    .string()
    .min(1)
    .max(80)
    .refine(
      (name) => !/discord|clyde/i.test(name),
      'must not contain "discord" or "clyde": Discord refuses every message sent under such a name (HTTP 400)',
    )
    .optional()
    .describe('Overrides the webhook\'s display name (Discord refuses one containing "discord" or "clyde").'),
  avatar_url: z
    .url({ protocol: /^https$/, error: 'must be an https URL' })
    .optional()
    .describe("Overrides the webhook's avatar."),
  mention: z
    .strictObject({
      users: z.array(snowflake).max(20).default([]),
      roles: z.array(snowflake).max(20).default([]),
      environment_types: z.array(z.string().min(1)).min(1).default(['production']),
    })
    .optional()
    .describe(
      'Who a message with a firing critical alert mentions, in these environments (default production). ' +
        'Absent: nobody; allowed_mentions is empty, so nothing in a message can ping anyone.',
    ),
  timeout: onCallTimeoutSchema,
  template: templateConfigSchema(DISCORD_TEMPLATE_PARTS),
});

/** A parsed Discord channel config (the webhook URL as a Secret). */
export type DiscordConfig = z.infer<typeof discordConfigSchema>;
