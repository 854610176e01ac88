import { z } from 'zod';
import { apiRootSchema, onCallTimeoutSchema, toolSecretSchema, webhookSecretSchema } from './on-call-config.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** What an Opsgenie channel's template shapes: each alert's message (title) and description (text), and a notice's message (`notice_title`). */
export const OPSGENIE_TEMPLATE_PARTS: TemplateParts = { title: 'event', text: 'event', notice_title: 'notice' };

/** Opsgenie's Alert API, by the account's region. */
export const OPSGENIE_REGIONS = {
  us: 'https://api.opsgenie.com',
  eu: 'https://api.eu.opsgenie.com',
} as const;

/**
 * Config of an Opsgenie channel: the Alert API with an API integration's key (a Secret, sent as
 * `Authorization: GenieKey …`). Every alert is one Opsgenie alert, its fingerprint the alias.
 */
export const opsgenieConfigSchema = kindConfigSchema('opsgenie', {
  api_key: toolSecretSchema(
    'the API Key of an "API" integration in Opsgenie',
    // Printable ASCII without spaces: it goes in a header.
    /^[!-~]{8,200}$/,
    'must be the API Key of an Opsgenie "API" integration, without spaces',
    '01234567-89ab-cdef-0123-456789abcdef',
  ).describe('The API Key of an "API" integration in Opsgenie (Create and Update access); a secret.'),
  region: z
    .enum(['us', 'eu'])
    .default('us')
    .describe('Where the Opsgenie account lives: us (api.opsgenie.com) or eu (api.eu.opsgenie.com).'),
  api_url: apiRootSchema
    .optional()
    .describe("An Alert API root in place of the region's (a proxy); https, or http on loopback."),
  tags: z
    .array(z.string().min(1).max(50))
    .max(20)
    .default([])
    .describe('Tags added to every alert created (at most 20, each up to 50 characters).'),
  timeout: onCallTimeoutSchema,
  template: templateConfigSchema(OPSGENIE_TEMPLATE_PARTS),
  webhook: z
    .strictObject({
      token: webhookSecretSchema('a token of your choosing, sent by the Webhook integration as a header').describe(
        'The token the Opsgenie Webhook integration sends in its custom header X-Deploy-Watchdog-Token (or as Authorization: Bearer …); use ${VAR}; a secret.',
      ),
    })
    .optional()
    .describe(
      "The way back: an Opsgenie Webhook integration posts its alerts' acknowledgements to POST /opsgenie/<channel name> on server.listen with this token, and they acknowledge the alert here. Absent: that path is not found.",
    ),
});

/** A parsed Opsgenie channel config (the API key as a Secret). */
export type OpsgenieConfig = z.infer<typeof opsgenieConfigSchema>;
