import { z } from 'zod';
import { apiRootSchema, onCallTimeoutSchema, toolSecretSchema, webhookSecretSchema } from './on-call-config.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** What a PagerDuty channel's template shapes: each alert's summary (its details are structural), and a notice's (`notice_title`). */
export const PAGERDUTY_TEMPLATE_PARTS: TemplateParts = { title: 'event', notice_title: 'notice' };

/** PagerDuty's Events API v2, by service region. */
export const PAGERDUTY_REGIONS = {
  us: 'https://events.pagerduty.com',
  eu: 'https://events.eu.pagerduty.com',
} as const;

/** PagerDuty's REST API, by service region: where the way back reads a grouped incident's alerts. */
export const PAGERDUTY_REST_REGIONS = {
  us: 'https://api.pagerduty.com',
  eu: 'https://api.eu.pagerduty.com',
} as const;

/** A PagerDuty integration key: 32 characters of letters and digits. */
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;
/** A REST API key: 20 characters today (letters, digits, `_`, `-`, `+`); any longer printable one is taken. */
const REST_API_KEY = /^[!-~]{20,256}$/;

/**
 * Config of a PagerDuty channel: the Events API v2 with an integration's routing key (a Secret).
 * Every alert is one PagerDuty alert, its fingerprint the dedup_key.
 */
export const pagerdutyConfigSchema = kindConfigSchema('pagerduty', {
  routing_key: toolSecretSchema(
    'the Integration Key of an "Events API V2" integration of the service',
    ROUTING_KEY,
    'must be the 32-character Integration Key of an "Events API V2" integration',
    '0123456789abcdef0123456789abcdef',
  ).describe('The Integration Key of an "Events API V2" integration of the PagerDuty service; a secret.'),
  region: z
    .enum(['us', 'eu'])
    .default('us')
    .describe(
      'The service region of the PagerDuty account: us (events.pagerduty.com) or eu (events.eu.pagerduty.com).',
    ),
  api_url: apiRootSchema
    .optional()
    .describe("An Events API root in place of the region's (a proxy); https, or http on loopback."),
  source: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("The events' payload.source where an alert names no app or server. Absent: deploy-watchdog."),
  timeout: onCallTimeoutSchema,
  template: templateConfigSchema(PAGERDUTY_TEMPLATE_PARTS),
  webhook: z
    .strictObject({
      signing_secret: webhookSecretSchema("the Secret of the service's V3 Webhook Subscription").describe(
        'The Secret PagerDuty showed once when the V3 Webhook Subscription was created (use ${VAR}); a secret.',
      ),
      api_key: toolSecretSchema(
        'a REST API key of the account',
        REST_API_KEY,
        'must be a REST API key of the account (20 or more characters without spaces)',
        'y_NbAkKc66ryYTWUXYEu',
      )
        .optional()
        .describe(
          'A REST API key of the account (a Read-only API key is enough; use ${VAR}); a secret. With it, an incident acknowledged in PagerDuty that groups several of our alerts acknowledges each of them here (its alerts are read from the REST API); absent: only the alert the incident is named after.',
        ),
      api_url: apiRootSchema
        .optional()
        .describe("A REST API root in place of the region's (a proxy); https, or http on loopback."),
    })
    .optional()
    .describe(
      "The way back: PagerDuty posts its incidents' acknowledgements to POST /pagerduty/<channel name> on server.listen, signed with this secret, and they acknowledge the alert here. Absent: that path is not found.",
    ),
});

/** A parsed PagerDuty channel config (the routing key as a Secret). */
export type PagerDutyConfig = z.infer<typeof pagerdutyConfigSchema>;
