import { z } from 'zod';
import { secretUrlSchema } from '../../config/secret.js';
import { onCallTimeoutSchema } from './on-call-config.js';
import { templateConfigSchema, type TemplateParts } from './template-config.js';
import { kindConfigSchema } from './kind-config-schema.js';

/** What a Teams card's template shapes: its header (the message), what it says of each alert above its facts, and a notice's header (`notice_title`). */
export const TEAMS_TEMPLATE_PARTS: TemplateParts = { title: 'message', text: 'event', notice_title: 'notice' };

/**
 * Whether a URL is one of the Office 365 connectors' incoming webhooks Microsoft retired
 * (`https://<tenant>.webhook.office.com/webhookb2/…`, the older `https://outlook.office.com/webhook/…`):
 * they no longer deliver, and Workflows webhooks replace them.
 */
export function isRetiredConnectorUrl(url: string): boolean {
  const { hostname, pathname } = new URL(url);
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'webhook.office.com' || host.endsWith('.webhook.office.com')) return true;
  return (host === 'outlook.office.com' || host === 'outlook.office365.com') && /^\/webhook/i.test(pathname);
}

/** Config of a Microsoft Teams channel: an Adaptive Card posted through a Teams Workflows webhook. */
export const teamsConfigSchema = kindConfigSchema('teams', {
  webhook_url: secretUrlSchema
    .refine(
      (url) => !isRetiredConnectorUrl(url.reveal()),
      'is an Office 365 connector webhook, which Microsoft retired; in Teams, add the Workflows template ' +
        '"Post to a channel when a webhook request is received" and set its URL here (value not shown: it is a secret)',
    )
    .describe("The Teams Workflows webhook's URL (its signature is the credential); a secret."),
  timeout: onCallTimeoutSchema,
  template: templateConfigSchema(TEAMS_TEMPLATE_PARTS),
});

/** A parsed Teams channel config (the webhook URL as a Secret). */
export type TeamsConfig = z.infer<typeof teamsConfigSchema>;
