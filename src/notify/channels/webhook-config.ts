import { z } from 'zod';
import { secretSchema, secretUrlSchema } from '../../config/secret.js';
import { kindConfigSchema } from './kind-config-schema.js';
import { onCallTimeoutSchema } from './on-call-config.js';

/** An HTTP header name (RFC 9110 §5.1: a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the request itself sets (its body, its connection): a configured value would contradict
 * it, or be ignored.
 */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'content-type',
  'host',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A header value: a Secret (it may be an API key), checked first to hold no control character (a
 * line break would end the header), with a message that never shows it.
 */
const headerValueSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters (value not shown)')
  .pipe(secretSchema);

/**
 * Config of a generic webhook channel that POSTs Alertmanager's webhook payload (version 4), for
 * any receiver built for Alertmanager. The URL, the headers' values, the bearer token and the
 * basic-auth password are Secrets: a webhook URL often carries its token.
 */
export const webhookConfigSchema = kindConfigSchema('webhook', {
  url: secretUrlSchema
    .refine((url) => {
      const parsed = new URL(url.reveal());
      return parsed.username === '' && parsed.password === '';
    }, 'must not carry a user or password (value not shown: it is a secret); use basic_auth')
    .describe('Where to POST; a secret (it may carry a token).'),
  headers: z
    // Names are checked below, where the error can name the header.
    .record(z.string(), headerValueSchema)
    .optional()
    .describe('HTTP headers sent with every request (an API key, say); the values are secrets.'),
  bearer_token: secretSchema.optional().describe('Sent as "Authorization: Bearer …"; a secret.'),
  basic_auth: z
    .strictObject({
      username: z.string().regex(/^[^:\s]{1,128}$/, 'must be 1 to 128 characters, without spaces or ":"'),
      password: secretSchema,
    })
    .optional()
    .describe('Sent as "Authorization: Basic …"; the password is a secret.'),
  max_alerts: z
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(0)
    .describe(
      "Alertmanager's max_alerts: at most this many alerts in one payload, the rest counted in truncatedAlerts; 0: all.",
    ),
  external_url: z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .optional()
    .describe(
      "The payload's externalURL, Alertmanager's link back to itself: the address your readers reach the console at. Absent: server.console.public_url, else empty.",
    ),
  timeout: onCallTimeoutSchema.describe(
    "How long to wait for the receiver's answer, in milliseconds; no answer in time is retryable.",
  ),
}).superRefine((config, ctx) => {
  if (config.bearer_token && config.basic_auth) {
    ctx.addIssue({ code: 'custom', path: ['bearer_token'], message: 'give bearer_token or basic_auth, not both' });
  }
  const seen = new Set<string>();
  for (const name of Object.keys(config.headers ?? {})) {
    const lower = name.toLowerCase();
    const at = ['headers', name];
    if (!HEADER_NAME.test(name)) {
      ctx.addIssue({ code: 'custom', path: at, message: 'must be an HTTP header name (letters, digits, -)' });
    } else if (RESERVED_HEADERS.has(lower)) {
      ctx.addIssue({ code: 'custom', path: at, message: 'is set by the request itself' });
    } else if (lower === 'authorization' && (config.bearer_token || config.basic_auth)) {
      ctx.addIssue({ code: 'custom', path: at, message: 'is set by bearer_token or basic_auth; give one of them' });
    } else if (seen.has(lower)) {
      ctx.addIssue({ code: 'custom', path: at, message: 'is given twice (header names ignore case)' });
    }
    seen.add(lower);
  }
});

/** A parsed webhook channel config (its URL, header values, token and password as Secrets). */
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;
