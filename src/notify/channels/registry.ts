import { z } from 'zod';
import type { ChannelKind } from './channel.js';
import { emailChannel } from './email.js';
import { logChannel } from './log.js';
import { slackChannel } from './slack.js';
import { webhookChannel } from './webhook.js';
import { slackAppChannel } from './slack-app.js';
import { pagerdutyChannel } from './pagerduty.js';
import { opsgenieChannel } from './opsgenie.js';
import { teamsChannel } from './teams.js';
import { discordChannel } from './discord.js';

/**
 * Every channel kind, by its `type` in the config. Adding a kind: one new file in this folder
 * (its config schema may sit beside it in `<kind>-config.ts`) and one line here; the config's
 * `notify.channels` schema follows.
 */
export const CHANNEL_KINDS = {
  slack: slackChannel,
  slack_app: slackAppChannel,
  email: emailChannel,
  log: logChannel,
  webhook: webhookChannel,
  pagerduty: pagerdutyChannel,
  opsgenie: opsgenieChannel,
  teams: teamsChannel,
  discord: discordChannel,
} as const;

/** The config schema of each kind, in {@link CHANNEL_KINDS} order. */
type ConfigSchemas<T> = { [K in keyof T]: T[K] extends ChannelKind<infer C> ? z.ZodType<C> : never }[keyof T];

/** The config of one channel in `notify.channels`: one strict schema per kind, chosen by `type`. */
export const channelConfigSchema = z.discriminatedUnion(
  'type',
  // Safe: every kind's configSchema is a strict object schema with a literal `type`.
  Object.values(CHANNEL_KINDS).map((k) => k.configSchema) as unknown as [
    ConfigSchemas<typeof CHANNEL_KINDS> & z.ZodObject,
    ...(ConfigSchemas<typeof CHANNEL_KINDS> & z.ZodObject)[],
  ],
);

/** A parsed channel config (secrets as Secret objects). */
export type ChannelConfig = z.infer<typeof channelConfigSchema>;
