/**
 * PagerDuty (`type: pagerduty`), through the Events API v2: every alert is one PagerDuty alert,
 * its fingerprint the `dedup_key`. A firing, repeated or escalated alert is a `trigger` (PagerDuty
 * folds a trigger with an open key into the alert it has, and takes its new severity), an
 * acknowledgement here is an `acknowledge`, and the end of the alert a `resolve`. An
 * acknowledgement given back has no event in the API and sends nothing: the next repeat triggers
 * again. A notice (a test, the digest, a remediation's outcome) is a change event, which pages
 * nobody.
 *
 * PagerDuty answers 202 to an event it queued, 400 to one it cannot read (kept, said with its
 * words), 429 when the integration sends too fast and 5xx when it is down (both retried through
 * the outbox). The routing key is in every request's body, added at the moment of sending: a
 * rendered message never holds it, and an answer echoing it is scrubbed.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import { formatUtc } from '../../lib/format-utc.js';
import { renderOptionsOf, type Channel, type ChannelKind, type Notification, type RenderOptions } from './channel.js';
import {
  alertsOf,
  incidentSender,
  incidentDetails,
  incidentKey,
  incidentLinks,
  noticeLines,
  type IncidentOptions,
  type KeyedRequest,
} from './incident-parts.js';
import { oneLine, safeHttpUrl } from './escape.js';
import {
  PAGERDUTY_REGIONS,
  PAGERDUTY_TEMPLATE_PARTS,
  pagerdutyConfigSchema,
  type PagerDutyConfig,
} from './pagerduty-config.js';
import { defaultTemplates } from './template-config.js';
import { alertViews, noticeTitle, plainLine } from './template-view.js';

/** The Events API's limits: a dedup_key's length, a summary's, a source's. */
export const PAGERDUTY_LIMITS = { dedupKey: 255, summary: 1024, source: 255 } as const;

/** An alert event of the Events API v2, without its routing key (added when sent). */
export interface PagerDutyAlertEvent {
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  dedup_key: string;
  payload?: {
    summary: string;
    source: string;
    severity: 'critical' | 'error' | 'warning' | 'info';
    timestamp: string;
    component?: string;
    group?: string;
    class: string;
    custom_details: Record<string, string>;
  };
  links?: { href: string; text: string }[];
  client?: string;
  client_url?: string;
}

/** A change event of the Events API v2 (a notice), without its routing key. */
export interface PagerDutyChangeEvent {
  payload: { summary: string; timestamp: string; source: string; custom_details: Record<string, string> };
  links?: { href: string; text: string }[];
}

/** One request: to `/v2/enqueue` (an alert event) or `/v2/change/enqueue` (a change event). */
export type PagerDutyRequest =
  { path: '/v2/enqueue'; event: PagerDutyAlertEvent } | { path: '/v2/change/enqueue'; event: PagerDutyChangeEvent };

/** What one notification is for PagerDuty: its requests, in order. */
export type PagerDutyMessage = KeyedRequest<PagerDutyRequest>[];

/** What rendering needs besides the notification. */
export interface PagerDutyRenderOptions
  extends IncidentOptions, Partial<Pick<RenderOptions, 'channelName' | 'templates'>> {
  /** payload.source where an alert names no app or server. */
  source: string;
}

/** `templates/pagerduty/`: the built-in rendering's own templates. */
export const PAGERDUTY_TEMPLATES = defaultTemplates('pagerduty', PAGERDUTY_TEMPLATE_PARTS);

/** Builds the requests of a notification. Pure. */
export function renderPagerDuty(n: Notification, o: PagerDutyRenderOptions): PagerDutyMessage {
  if (n.type === 'notice') {
    const details = Object.fromEntries(noticeLines(n).map((line, i) => [`${i + 1}`, line]));
    const href = safeHttpUrl(n.url);
    const event: PagerDutyChangeEvent = {
      payload: {
        summary: plainLine((escape) => noticeTitle(n, o, PAGERDUTY_TEMPLATES, escape), PAGERDUTY_LIMITS.summary),
        timestamp: formatUtc(o.now, 'iso'),
        source: o.source,
        custom_details: { topic: n.topic, ...details },
      },
      ...(href ? { links: [{ href, text: 'Details' }] } : {}),
    };
    return [{ key: null, request: { path: '/v2/change/enqueue', event } }];
  }
  return alertsOf(n).flatMap((e): PagerDutyMessage => {
    const event = alertEvent(e, { ...o, routes: n.routes });
    return event ? [{ key: `${e.id}:${event.event_action}`, request: { path: '/v2/enqueue', event } }] : [];
  });
}

/** The event for one alert event; null where the API has none (an acknowledgement given back). */
function alertEvent(e: AlertEvent, o: PagerDutyRenderOptions): PagerDutyAlertEvent | null {
  const dedup_key = incidentKey(e.fingerprint, PAGERDUTY_LIMITS.dedupKey);
  switch (e.kind) {
    case 'acknowledged':
      return { event_action: 'acknowledge', dedup_key };
    case 'resolved':
      return { event_action: 'resolve', dedup_key };
    case 'unacknowledged':
      return null;
    default: {
      const links = incidentLinks(e, o).map((l) => ({ href: l.url, text: l.label }));
      const consoleUrl = safeHttpUrl(o.consoleUrl);
      const views = alertViews(e, { ...o, channelName: o.channelName ?? '' });
      const template = o.templates?.title ?? PAGERDUTY_TEMPLATES.title!;
      return {
        event_action: 'trigger',
        dedup_key,
        payload: {
          summary: plainLine((escape) => template.render(views, escape), PAGERDUTY_LIMITS.summary),
          source: oneLine(e.labels.app || e.labels.server || o.source, PAGERDUTY_LIMITS.source),
          // Our severities are PagerDuty's own words (it has `error` too, unused).
          severity: e.severity,
          timestamp: formatUtc(Date.parse(e.at) || o.now, 'iso'),
          ...(e.labels.app ? { component: oneLine(e.labels.app, 255) } : {}),
          ...(e.labels.environment_type ? { group: oneLine(e.labels.environment_type, 255) } : {}),
          class: e.check,
          custom_details: incidentDetails(e, o),
        },
        ...(links.length > 0 ? { links } : {}),
        client: 'deploy-watchdog',
        ...(consoleUrl ? { client_url: consoleUrl } : {}),
      };
    }
  }
}

/** The PagerDuty channel kind. */
export const pagerdutyChannel = {
  configSchema: pagerdutyConfigSchema,
  templateParts: PAGERDUTY_TEMPLATE_PARTS,
  create(config, deps): Channel<PagerDutyMessage> {
    const tool = {
      name: 'PagerDuty',
      secret: config.routing_key,
      regions: PAGERDUTY_REGIONS,
      // An unknown routing key is answered 400 like a malformed event, but every event meets it.
      credentialRefused: { key: 'routing_key', reason: /invalid routing.?key/i },
    } as const;
    return {
      ...incidentSender(config, deps, tool, (request: PagerDutyRequest, root) => ({
        url: `${root}${request.path}`,
        body: { routing_key: config.routing_key.reveal(), ...request.event },
      })),
      render: (n) =>
        renderPagerDuty(n, { ...renderOptionsOf(config, deps), source: config.source ?? 'deploy-watchdog' }),
    };
  },
} satisfies ChannelKind<PagerDutyConfig, PagerDutyMessage>;
