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
  const checks = Object.entries(config.checks) as [string, { runbook_url?: string }][];
  return {
    pages: Object.fromEntries(Object.entries(config.notify.links).filter(([, template]) => template)),
    checkRunbooks: Object.fromEntries(checks.flatMap(([check, s]) => (s.runbook_url ? [[check, s.runbook_url]] : []))),
    routeRunbooks: Object.fromEntries(
      config.notify.routes.flatMap((r, i) => (r.runbook_url ? [[routeName(r, i), r.runbook_url]] : [])),
    ),
  };
}

/** The page type of a subject, when the platform's pages include one for it. */
export function pageTypeOf(subject: Subject | undefined): PageType | null {
  const type = subject?.type;
  return type === 'app' || type === 'run' || type === 'backup' ? type : null;
}
