import { z } from 'zod';
import { emailConfigSchema } from './email-config.js';
import { emailChannel } from './email.js';
import { logConfigSchema } from './log-config.js';
import { logChannel } from './log.js';
import { slackConfigSchema } from './slack-config.js';
import { slackChannel } from './slack.js';

/**
 * Every channel kind, by its `type` in the config. Adding a kind: one new file in this folder,
 * one line here and one in {@link channelConfigSchema}.
 */
export const CHANNEL_KINDS = {
  slack: slackChannel,
  email: emailChannel,
  log: logChannel,
} as const;

/** The config of one channel in `notify.channels`: one strict schema per kind, chosen by `type`. */
export const channelConfigSchema = z.discriminatedUnion('type', [
  slackConfigSchema,
  emailConfigSchema,
  logConfigSchema,
]);

/** A parsed channel config (secrets as Secret objects). */
export type ChannelConfig = z.infer<typeof channelConfigSchema>;
