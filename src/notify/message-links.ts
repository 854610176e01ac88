/**
 * What an alert message links to besides the app itself, from config: the platform's own pages
 * (`notify.links`, by the record an alert is about) and the runbooks (`checks.<name>.runbook_url`,
 * `notify.routes[].runbook_url`). Built once by the composition root and handed to the channels,
 * which show them as buttons (Slack) or links (email).
 */
import type { Subject } from '../lib/alert-vocabulary.js';
import type { NotifySection } from './notify-schema.js';
import { routeName } from './router.js';

/** The records the platform has a page for. */
export type PageType = keyof NotifySection['links'];

/** The links of every message, as configured. */
export interface MessageLinks {
  /** Page URL templates by record type, `{id}` to fill (`fillPage`). */
  pages: Readonly<Partial<Record<PageType, string>>>;
  /** `checks.<name>.runbook_url`, by check name. */
  checkRunbooks: Readonly<Record<string, string>>;
  /** `notify.routes[].runbook_url`, by route name (`route-N` for an unnamed one). */
  routeRunbooks: Readonly<Record<string, string>>;
}

/** No links: what a channel shows when nothing is configured (a test message, a bare config). */
export const NO_LINKS: MessageLinks = { pages: {}, checkRunbooks: {}, routeRunbooks: {} };

/** The links of the config's `notify.links`, checks (each section's `runbook_url`) and routes. */
export function messageLinks(config: {
  notify: Pick<NotifySection, 'links' | 'routes'>;
  checks: object;
}): MessageLinks {
  const pages: Partial<Record<PageType, string>> = {};
  for (const [type, template] of Object.entries(config.notify.links) as [PageType, string | undefined][]) {
    if (template) pages[type] = template;
  }
  const checkRunbooks: Record<string, string> = {};
  for (const [check, section] of Object.entries(config.checks) as [string, { runbook_url?: string }][]) {
    if (section.runbook_url) checkRunbooks[check] = section.runbook_url;
  }
  const routeRunbooks: Record<string, string> = {};
  config.notify.routes.forEach((r, i) => {
    if (r.runbook_url) routeRunbooks[routeName(r, i)] = r.runbook_url;
  });
  return { pages, checkRunbooks, routeRunbooks };
}

/** The page type of a subject, when the platform's pages include one for it. */
export function pageTypeOf(subject: Subject | undefined): PageType | null {
  const type = subject?.type;
  return type === 'app' || type === 'run' || type === 'backup' ? type : null;
}
