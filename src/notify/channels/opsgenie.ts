/**
 * Opsgenie (`type: opsgenie`), through the Alert API: every alert is one Opsgenie alert, its
 * fingerprint the `alias` (Opsgenie keeps one open alert per alias, and counts a create with an open
 * alias as a repeat of it). A firing or repeated alert is a create; an escalated one a create and
 * its new priority; an acknowledgement here an acknowledge (given back: an unacknowledge), each by
 * name with its comment as the note; the end of the alert a close, saying why. A notice about an
 * alert (a remediation's outcome, its start) is a note on it; another notice (a test, the digest)
 * an alert of the lowest priority, closed at once.
 *
 * The API answers 202 with a requestId to a request it queued (it is processed after), 4xx to one
 * it refuses at once (kept, said with its words), 429 when the key sends too fast and 5xx when it
 * is down (both retried through the outbox). The key goes in the Authorization header as
 * `GenieKey …`, built at the moment of sending; an answer echoing it is scrubbed.
 */
import type { AlertEvent } from '../../alerts/alert-event.js';
import type { Severity } from '../../lib/alert-vocabulary.js';
import type { Channel, ChannelKind, NoticeNotification, Notification, RenderOptions } from './channel.js';
import { renderOptionsOf } from './channel.js';
import { cutText, oneLine, plainText } from './escape.js';
import {
  alertsOf,
  incidentSender,
  incidentDetails,
  incidentKey,
  noticeKey,
  noticeLines,
  type IncidentOptions,
  type KeyedRequest,
} from './incident-parts.js';
import {
  OPSGENIE_REGIONS,
  OPSGENIE_TEMPLATE_PARTS,
  opsgenieConfigSchema,
  type OpsgenieConfig,
} from './opsgenie-config.js';
import { defaultTemplates } from './template-config.js';
import { alertViews, noticeTitle, plainLine } from './template-view.js';

/** The Alert API's limits (characters). */
export const OPSGENIE_LIMITS = {
  message: 130,
  alias: 512,
  description: 15_000,
  user: 100,
  note: 25_000,
  entity: 512,
  detailKey: 8_000,
} as const;

/** Our severities as Opsgenie's priorities: critical pages (P1), a warning is P3, information P5. */
export const OPSGENIE_PRIORITY: Readonly<Record<Severity, 'P1' | 'P3' | 'P5'>> = {
  critical: 'P1',
  warning: 'P3',
  info: 'P5',
};

/** Who the requests say they come from (`source`). */
const SOURCE = 'deploy-watchdog';

/** One request of the Alert API: a method, a path under the API root (query included), a body. */
export interface OpsgenieRequest {
  method: 'POST' | 'PUT';
  path: string;
  body: Record<string, unknown>;
}

/** What one notification is for Opsgenie: its requests, in order. */
export type OpsgenieMessage = KeyedRequest<OpsgenieRequest>[];

/** What rendering needs besides the notification. */
export interface OpsgenieRenderOptions
  extends IncidentOptions, Partial<Pick<RenderOptions, 'channelName' | 'templates'>> {
  tags: readonly string[];
}

/** `templates/opsgenie/`: the built-in rendering's own templates. */
export const OPSGENIE_TEMPLATES = defaultTemplates('opsgenie', OPSGENIE_TEMPLATE_PARTS);

/** The path of an action on an alert by its alias: `/v2/alerts/{alias}/{action}?identifierType=alias`. */
function byAlias(alias: string, action: string): string {
  return `/v2/alerts/${encodeURIComponent(alias)}/${action}?identifierType=alias`;
}

/** An action posted on an alert by its alias (acknowledge, close, a note). */
function postOn(alias: string, action: string, body: Record<string, unknown>): OpsgenieRequest {
  return { method: 'POST', path: byAlias(alias, action), body };
}

/**
 * A create of an alert: `head` (its message, alias and description, its details and entity where
 * given), then who sends it, its priority and its tags, in that order.
 */
function createAlert(head: Record<string, unknown>, priority: string, tags: readonly string[]): OpsgenieRequest {
  return { method: 'POST', path: '/v2/alerts', body: { ...head, source: SOURCE, priority, tags: [...tags] } };
}

/** Builds the requests of a notification. Pure. */
export function renderOpsgenie(n: Notification, o: OpsgenieRenderOptions): OpsgenieMessage {
  if (n.type === 'notice') return noticeRequests(n, o);
  return alertsOf(n).flatMap((e) => {
    const requests = eventRequests(e, { ...o, routes: n.routes });
    return requests.map((request, i) => ({ key: `${e.id}:${i}:${request.path}`, request }));
  });
}

/** The requests of one alert event. */
function eventRequests(e: AlertEvent, o: OpsgenieRenderOptions): OpsgenieRequest[] {
  const alias = incidentKey(e.fingerprint, OPSGENIE_LIMITS.alias);
  const who = e.acknowledgement;
  switch (e.kind) {
    case 'acknowledged':
    case 'unacknowledged':
      return [
        postOn(alias, e.kind === 'acknowledged' ? 'acknowledge' : 'unacknowledge', {
          user: oneLine(who?.by ?? 'someone', OPSGENIE_LIMITS.user),
          source: SOURCE,
          note: oneLine(
            `${e.kind === 'acknowledged' ? 'Acknowledged' : 'Acknowledgement given back'} in deploy-watchdog (${who?.via ?? 'unknown'})${who?.comment ? `: ${who.comment}` : ''}`,
            OPSGENIE_LIMITS.note,
          ),
        }),
      ];
    case 'resolved': {
      const note = oneLine(`Resolved${e.resolution ? `: ${e.resolution}` : ''}`, OPSGENIE_LIMITS.note);
      return [postOn(alias, 'close', { source: SOURCE, note })];
    }
    default: {
      const templates = { ...OPSGENIE_TEMPLATES, ...o.templates };
      const views = alertViews(e, { ...o, channelName: o.channelName ?? '' });
      // The description is several lines: the log among the details keeps its own.
      const text = templates.text!.render(views, (v) => plainText(v, OPSGENIE_LIMITS.description, true));
      const head = {
        message: plainLine((escape) => templates.title!.render(views, escape), OPSGENIE_LIMITS.message),
        alias,
        description: cutText(text, OPSGENIE_LIMITS.description),
        details: cutDetails(incidentDetails(e, o)),
        ...(e.labels.app ? { entity: oneLine(e.labels.app, OPSGENIE_LIMITS.entity) } : {}),
      };
      const create = createAlert(head, OPSGENIE_PRIORITY[e.severity], o.tags);
      // A create with an open alias only counts a repeat: a new severity is said on its own.
      if (e.kind !== 'escalated') return [create];
      return [
        create,
        { method: 'PUT', path: byAlias(alias, 'priority'), body: { priority: OPSGENIE_PRIORITY[e.severity] } },
      ];
    }
  }
}

/**
 * The details as Opsgenie takes them: its custom properties, at most {@link OPSGENIE_LIMITS.detailKey}
 * characters in all (keys and values); past that, the rest are left out (the description has them).
 */
function cutDetails(details: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let used = 0;
  for (const [k, v] of Object.entries(details)) {
    if (used + k.length + v.length > OPSGENIE_LIMITS.detailKey) break;
    out[k] = v;
    used += k.length + v.length;
  }
  return out;
}

/** A notice: a note on the alert it is about; else an alert of the lowest priority, closed at once. */
function noticeRequests(n: NoticeNotification, o: OpsgenieRenderOptions): OpsgenieMessage {
  const title = plainLine((escape) => noticeTitle(n, o, OPSGENIE_TEMPLATES, escape), OPSGENIE_LIMITS.description);
  const text = [title, ...noticeLines(n)].join('\n');
  if (n.fingerprint) {
    const alias = incidentKey(n.fingerprint, OPSGENIE_LIMITS.alias);
    const note = cutText(text, OPSGENIE_LIMITS.note);
    return [{ key: null, request: postOn(alias, 'notes', { source: SOURCE, note }) }];
  }
  const alias = noticeKey(n);
  const head = {
    message: oneLine(title, OPSGENIE_LIMITS.message),
    alias,
    description: cutText(text, OPSGENIE_LIMITS.description),
  };
  return [
    { key: null, request: createAlert(head, 'P5', o.tags) },
    { key: null, request: postOn(alias, 'close', { source: SOURCE }) },
  ];
}

/** The Opsgenie channel kind. */
export const opsgenieChannel = {
  configSchema: opsgenieConfigSchema,
  templateParts: OPSGENIE_TEMPLATE_PARTS,
  create(config, deps): Channel<OpsgenieMessage> {
    const tool = { name: 'Opsgenie', secret: config.api_key, regions: OPSGENIE_REGIONS } as const;
    return {
      ...incidentSender(config, deps, tool, (request: OpsgenieRequest, root) => ({
        method: request.method,
        url: `${root}${request.path}`,
        headers: { authorization: `GenieKey ${config.api_key.reveal()}` },
        body: request.body,
      })),
      // A remediation's start is a note on the alert in Opsgenie.
      showsProgress: true,
      render: (n) => renderOpsgenie(n, { ...renderOptionsOf(config, deps), tags: config.tags }),
    };
  },
} satisfies ChannelKind<OpsgenieConfig, OpsgenieMessage>;
