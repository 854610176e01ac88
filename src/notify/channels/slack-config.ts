import { z } from 'zod';
import { secretSchema } from '../../config/secret.js';

/**
 * True for an absolute http(s) URL. Used before the value becomes a Secret, so the check never
 * needs to print it.
 */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A webhook URL: validated as an http(s) URL first (the error names the rule, never the value),
 * then wrapped in a Secret, since a Slack webhook URL is itself the credential.
 */
export const webhookUrlSchema = z
  .string({ error: 'must be a string (the webhook URL)' })
  .min(1, 'must not be empty')
  .refine(isHttpUrl, { message: 'must be an http(s) URL (value not shown: it is a secret)', abort: true })
  .pipe(secretSchema);

/** Config of a Slack incoming-webhook channel. */
export const slackConfigSchema = z
  .object({
    name: z.string().min(1, 'must not be empty'),
    type: z.literal('slack'),
    webhook_url: webhookUrlSchema,
    /** Overrides the webhook's display name, where the Slack app allows it. */
    username: z.string().min(1).max(80).optional(),
    /** Overrides the webhook's icon, e.g. `:rotating_light:`. */
    icon_emoji: z
      .string()
      .regex(/^:[a-z0-9_+-]+:$/, 'must look like :emoji_name:')
      .optional(),
    /**
     * Mentions added to messages by severity, e.g. `{ critical: '<!here>' }`. The only place a
     * mention can come from is this config: everything from the API is escaped.
     */
    mention: z.object({ critical: z.string().min(1).max(200).optional() }).strict().optional(),
    /** At most this many events per message; the rest are counted as "and N more". */
    max_items: z.number().int().min(1).max(20).optional(),
    /** How long to wait for Slack's answer, in milliseconds; no answer in time is retryable. */
    timeout: z.number().int().min(100).max(120_000).default(10_000),
  })
  .strict();

/** A parsed Slack channel config (the webhook URL as a Secret). */
export type SlackConfig = z.infer<typeof slackConfigSchema>;
