/**
 * The link a message gives to its alert's page in the console, for every kind that shows one
 * (the Slack app's buttons, Discord, Teams, PagerDuty and Opsgenie): built from the console's own
 * paths (`lib/console-paths.ts`), so a message never imports the console.
 */
import { alertPath } from '../../lib/console-paths.js';
import { safeHttpUrl } from './escape.js';
import { SLACK_LIMITS } from './slack-limits.js';

/** An alert's page in the console at its public address, or undefined without one. */
export function consoleLink(consoleUrl: string | undefined, fingerprint: string): string | undefined {
  if (!consoleUrl) return undefined;
  const base = consoleUrl.endsWith('/') ? consoleUrl : `${consoleUrl}/`;
  return safeHttpUrl(new URL(alertPath(fingerprint).slice(1), base).href, SLACK_LIMITS.buttonUrl) ?? undefined;
}
