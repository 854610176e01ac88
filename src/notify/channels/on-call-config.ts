import { z } from 'zod';
import { isLoopbackHost } from '../../config/loopback-host.js';
import { secretSchema } from '../../config/secret.js';

/**
 * Config pieces the on-call channel kinds (PagerDuty, Opsgenie, Teams, Discord) share: the time
 * limit of one request, and an API root that may replace the service's own.
 */

/** How long to wait for the service's answer to one request, in milliseconds; no answer in time is retryable. */
export const onCallTimeoutSchema = z
  .number()
  .int()
  .min(100)
  .max(120_000)
  .default(10_000)
  .describe(
    "How long to wait for the service's answer to one request, in milliseconds; no answer in time is retryable.",
  );

/**
 * A URL a credential is sent to: https, or http on loopback only, since `sent` (what the message
 * names: "the key") would cross the network in clear text.
 */
export function secureUrlSchema(sent: string) {
  return z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).refine((url) => {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || isLoopbackHost(parsed.hostname);
  }, `must be https (http only on loopback: ${sent} would cross the network in clear text)`);
}

/** An API root in place of the service's own (a proxy, a test double), the key or token sent to it. */
export const apiRootSchema = secureUrlSchema('the key').refine((url) => {
  const parsed = new URL(url);
  return parsed.username === '' && parsed.password === '' && parsed.search === '' && parsed.hash === '';
}, 'must be a bare API root, without user, password, query or fragment');

/** An API root without its trailing slash, so that paths join it as written. */
export function apiRoot(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * A secret of an on-call tool's config, as the tool forms it: refused with `refusal` unless it
 * matches `form`, the value never shown. `example` is one of that form: what `validate` checks an
 * unset ${VAR} with.
 */
export function toolSecretSchema(what: string, form: RegExp, refusal: string, example: string) {
  return z
    .string({ error: `is required: ${what}` })
    .regex(form, `${refusal} (value not shown: it is a secret)`)
    .meta({ examples: [example] })
    .pipe(secretSchema);
}

/**
 * A secret an on-call tool's webhook proves itself with (PagerDuty's signing secret, the token
 * Opsgenie sends as a header): at least 16 printable characters without spaces, so a guessable
 * word is refused.
 */
export function webhookSecretSchema(what: string) {
  return toolSecretSchema(
    what,
    /^[!-~]{16,512}$/,
    `must be ${what}: 16 to 512 characters without spaces`,
    '0123456789abcdef0123456789abcdef',
  );
}
