import { z } from 'zod';
import { isLoopbackHost } from '../../config/loopback-host.js';
import { secretSchema } from '../../config/secret.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/**
 * What an email's template shapes: its title (the subject after the prefix, and the heading), and
 * what it says of each alert in the plain-text part (`text`) and in the HTML part (`html`).
 */
export const EMAIL_TEMPLATE_PARTS: TemplateParts = {
  title: 'message',
  text: 'event',
  html: 'event',
  notice_title: 'notice',
};

/**
 * Config of an email channel sent over SMTP.
 *
 * `smtp.secure`: `starttls` (default) upgrades a plain connection and refuses to go on without TLS;
 * `tls` is TLS from the first byte (port 465); `none` sends in clear text and is meant ONLY for a
 * local sink on loopback (the demo, tests), never for a real relay: with `auth`, `none` is refused
 * unless the host is loopback.
 */
export const emailConfigSchema = kindConfigSchema('email', {
  smtp: z
    .strictObject({
      host: z.string().min(1, 'must not be empty'),
      port: z.number().int().min(1).max(65535).default(587),
      secure: z.enum(['starttls', 'tls', 'none']).default('starttls'),
      auth: z.strictObject({ user: z.string().min(1, 'must not be empty'), pass: secretSchema }).optional(),
      /**
       * Timeout of each SMTP step (connection, greeting, every command), in milliseconds. One
       * send can take up to (12 + recipients) times this; the delivery loop waits that long.
       */
      timeout: z.number().int().min(100).max(600_000).default(15_000),
      /** Off only for a relay with a self-signed certificate you trust by other means. */
      tls_reject_unauthorized: z.boolean().default(true),
    })
    .superRefine((smtp, ctx) => {
      // A password in clear text crosses no network only on loopback. A host still holding
      // `${…}` is a variable `validate` could not read, so whether it is loopback is unknown.
      if (smtp.secure !== 'none' || !smtp.auth || smtp.host.includes('${') || isLoopbackHost(smtp.host)) return;
      ctx.addIssue({
        code: 'custom',
        path: ['secure'],
        message:
          'is "none" with smtp.auth: the password would cross the network in clear text to smtp.host, which is not loopback; use starttls or tls (none is for a local sink on 127.0.0.1 or localhost)',
      });
    }),
  from: z.email('must be an email address'),
  to: z.array(z.email('must be an email address')).min(1, 'needs at least one recipient'),
  subject_prefix: z
    .string()
    .max(60)
    // The prefix goes into a header: a line break in it would start a new header.
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    .refine((s) => !/[\r\n\u0000-\u001f\u007f]/.test(s), 'must not contain control characters')
    .default('[deploy-watchdog]'),
  template: templateConfigSchema(EMAIL_TEMPLATE_PARTS),
});

/** A parsed email channel config (the SMTP password as a Secret). */
export type EmailConfig = z.infer<typeof emailConfigSchema>;
