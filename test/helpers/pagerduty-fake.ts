/**
 * A protocol-level fake of PagerDuty's Events API v2 for tests, on loopback. It takes what the API
 * takes and refuses the rest as the API does (400 "Event object is invalid" with its errors): a
 * routing key of 32 characters that is the integration's own, an event_action of trigger,
 * acknowledge or resolve, a dedup_key of at most 255 characters (required to acknowledge or
 * resolve), a trigger's payload with a summary (at most 1024), a source and a severity of
 * critical, error, warning or info; links as { href, text }. It answers 202 with
 * { status: "success", message: "Event processed", dedup_key }, and keeps alerts by dedup_key with
 * PagerDuty's semantics: a trigger with the key of an open alert is folded into it (its severity
 * updated, a count kept), one with an unknown or resolved key opens a new alert; an acknowledge
 * or a resolve of a key with no open alert is accepted (202) and changes nothing (`ignored`).
 * Change events (`/v2/change/enqueue`) are kept apart: they open nothing.
 *
 * A person's act in PagerDuty (`act`: acknowledge, unacknowledge, resolve an incident) changes the
 * alert and is told as a V3 webhook is: `{ event: { id, event_type, resource_type, occurred_at,
 * agent, data } }` posted with `X-PagerDuty-Signature: v1=<HMAC-SHA256 of the body>` under the
 * subscription's secret (or signatures given, to forge or rotate). `data.id` is the incident's id.
 *
 * Alerts are grouped into incidents as Alert Grouping does (`group`: one incident of several
 * alerts, ours or another tool's); an act on an incident changes all its alerts. Its REST API
 * serves `GET /incidents/{id}/alerts` as documented: `Authorization: Token token=<key>` (401
 * otherwise), `Accept: application/vnd.pagerduty+json;version=2` (406 otherwise), classic
 * pagination (`limit`, at most `maxLimit`; `offset`; `more`), each alert with its `alert_key` and a
 * status of `triggered` or `resolved` (an alert has no acknowledged status: the incident has).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  postWebhook,
  problems,
  startFakeService,
  type FakeAnswer,
  type FakeRequest,
  type FakeService,
  type WebhookPost,
} from './fake-service.js';

const SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;

const link = z.object({ href: z.url(), text: z.string().optional() }).strict();

const alertEvent = z
  .object({
    routing_key: z.string().length(32),
    event_action: z.enum(['trigger', 'acknowledge', 'resolve']),
    dedup_key: z.string().min(1).max(255).optional(),
    payload: z
      .object({
        summary: z.string().min(1).max(1024),
        source: z.string().min(1),
        severity: z.enum(SEVERITIES),
        timestamp: z.iso.datetime({ offset: true }).optional(),
        component: z.string().optional(),
        group: z.string().optional(),
        class: z.string().optional(),
        custom_details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict()
      .optional(),
    links: z.array(link).optional(),
    images: z.array(z.unknown()).optional(),
    client: z.string().optional(),
    client_url: z.url().optional(),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.event_action === 'trigger' && !e.payload)
      ctx.addIssue({ code: 'custom', path: ['payload'], message: 'is required to trigger' });
    if (e.event_action !== 'trigger' && !e.dedup_key)
      ctx.addIssue({ code: 'custom', path: ['dedup_key'], message: `is required to ${e.event_action}` });
  });

const changeEvent = z
  .object({
    routing_key: z.string().length(32),
    payload: z
      .object({
        summary: z.string().min(1).max(1024),
        timestamp: z.iso.datetime({ offset: true }).optional(),
        source: z.string().optional(),
        custom_details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
    links: z.array(link).optional(),
  })
  .strict();

/** An event the fake accepted. */
export type PagerDutyEvent = z.infer<typeof alertEvent>;

/** An alert as PagerDuty keeps it. */
export interface PagerDutyAlert {
  dedupKey: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  severity: (typeof SEVERITIES)[number];
  summary: string;
  /** Triggers folded into it, the first included. */
  triggers: number;
  /** The last trigger's payload and links. */
  last: PagerDutyEvent;
  /** The id of the incident that groups it. */
  incident: string;
}

/** The running fake. */
export interface PagerDutyFake extends FakeService {
  /** The integration's routing key (32 characters), to configure the channel with. */
  readonly routingKey: string;
  /** Alerts by dedup_key: the newest one per key (a resolved key triggered again opens a new one). */
  readonly alerts: Map<string, PagerDutyAlert>;
  /** Alerts ever opened, in order (one per incident). */
  readonly opened: PagerDutyAlert[];
  /** Accepted events, in order. */
  readonly events: PagerDutyEvent[];
  /** Accepted change events. */
  readonly changes: z.infer<typeof changeEvent>[];
  /** Acknowledges and resolves that found no open alert (accepted, changed nothing). */
  readonly ignored: PagerDutyEvent[];
  /** What was refused, and why. */
  readonly invalid: string[][];
  /** A REST API key of the account (20 characters), to configure the webhook with. */
  readonly apiKey: string;
  /** The largest page the REST API answers (PagerDuty's is 100). */
  maxLimit: number;
  /**
   * Groups the alerts of `dedupKeys` into the incident of the first, as Alert Grouping does; a key
   * with no alert opens one (another tool's). Answers the incident's id.
   */
  group(dedupKeys: string[]): string;
  /**
   * A person acts on the incident of `dedupKey` in PagerDuty: its status changes and the V3 webhook
   * subscription at `to` is told, signed with its secret (unless `signatures` are given). Answers
   * the status the subscriber gave and what was posted (to replay it).
   */
  act(
    to: { url: string; secret: string },
    spec: {
      dedupKey: string;
      eventType:
        'incident.acknowledged' | 'incident.unacknowledged' | 'incident.resolved' | 'incident.priority_updated';
      agent: string | null;
      signatures?: string[];
      /** When it was done (ms); absent: now. */
      occurredAt?: number;
    },
  ): Promise<{ status: number; sent: WebhookPost }>;
}

/** The V3 webhook signature of a body under a subscription's secret. */
export function pagerdutyWebhookSignature(secret: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Starts the fake. */
export async function startPagerDutyFake(): Promise<PagerDutyFake> {
  const routingKey = randomBytes(16).toString('hex');
  const alerts = new Map<string, PagerDutyAlert>();
  const opened: PagerDutyAlert[] = [];
  const events: PagerDutyEvent[] = [];
  const changes: z.infer<typeof changeEvent>[] = [];
  const ignored: PagerDutyEvent[] = [];
  const invalid: string[][] = [];
  const apiKey = randomBytes(15).toString('base64url');
  const incidentId = () => `Q${randomBytes(6).toString('hex').toUpperCase()}`;

  const refuse = (errors: string[]): FakeAnswer => {
    invalid.push(errors);
    return { status: 400, body: { status: 'invalid event', message: 'Event object is invalid', errors } };
  };

  const restError = (status: number, message: string, code: number): FakeAnswer => ({
    status,
    body: { error: { message, code } },
  });
  const incidentAlerts = (req: FakeRequest, incident: string): FakeAnswer => {
    if (req.headers.authorization !== `Token token=${apiKey}`) return restError(401, 'Unauthorized', 2006);
    if (req.headers.accept !== 'application/vnd.pagerduty+json;version=2')
      return restError(406, 'Not Acceptable', 2001);
    const query = new URL(req.url, 'http://fake').searchParams;
    const limit = Math.min(Number(query.get('limit') ?? 25), fake.maxLimit);
    const offset = Number(query.get('offset') ?? 0);
    const all = opened.filter((a) => a.incident === incident);
    if (all.length === 0) return restError(404, 'Not Found', 2100);
    const page = all.slice(offset, offset + limit).map((a, i) => ({
      id: `A${offset + i}`,
      type: 'alert',
      summary: a.summary,
      self: `https://api.pagerduty.com/incidents/${incident}/alerts/A${offset + i}`,
      html_url: `https://acme.pagerduty.com/alerts/A${offset + i}`,
      created_at: '2026-11-01T12:00:00Z',
      status: a.status === 'resolved' ? 'resolved' : 'triggered',
      alert_key: a.dedupKey,
      service: { id: 'PIJ90N7', type: 'service_reference' },
      incident: { id: incident, type: 'incident_reference' },
      suppressed: false,
      severity: a.severity,
      integration: { id: 'PQ12345', type: 'events_api_v2_inbound_integration_reference' },
      body: { type: 'alert_body', contexts: [], details: a.last.payload?.custom_details ?? {} },
    }));
    return { status: 200, body: { alerts: page, limit, offset, more: offset + limit < all.length, total: null } };
  };

  const service = await startFakeService((req) => {
    const rest = /^\/incidents\/([^/?]+)\/alerts(\?|$)/.exec(req.url);
    if (req.method === 'GET' && rest) return incidentAlerts(req, decodeURIComponent(rest[1]!));
    if (req.method !== 'POST') return { status: 405, body: { status: 'error', message: 'Method not allowed' } };
    if (req.url === '/v2/change/enqueue') {
      const parsed = changeEvent.safeParse(req.body);
      if (!parsed.success) return refuse(problems(parsed.error.issues));
      if (parsed.data.routing_key !== routingKey) return refuse(['Invalid routing key']);
      changes.push(parsed.data);
      return { status: 202, body: { status: 'success', message: 'Change event processed' } };
    }
    if (req.url !== '/v2/enqueue') return { status: 404, body: { status: 'error', message: 'Not found' } };
    const parsed = alertEvent.safeParse(req.body);
    if (!parsed.success) return refuse(problems(parsed.error.issues));
    const e = parsed.data;
    if (e.routing_key !== routingKey) return refuse(['Invalid routing key']);
    events.push(e);
    const key = e.dedup_key ?? randomBytes(16).toString('hex');
    const open = alerts.get(key);
    const isOpen = open !== undefined && open.status !== 'resolved';
    if (e.event_action === 'trigger') {
      if (isOpen) {
        open.triggers++;
        open.severity = e.payload!.severity;
        open.summary = e.payload!.summary;
        open.last = e;
      } else {
        const alert: PagerDutyAlert = {
          dedupKey: key,
          status: 'triggered',
          severity: e.payload!.severity,
          summary: e.payload!.summary,
          triggers: 1,
          last: e,
          incident: incidentId(),
        };
        alerts.set(key, alert);
        opened.push(alert);
      }
    } else if (!isOpen) {
      ignored.push(e);
    } else {
      open.status = e.event_action === 'acknowledge' ? 'acknowledged' : 'resolved';
    }
    return { status: 202, body: { status: 'success', message: 'Event processed', dedup_key: key } };
  });
  const STATUS_AFTER = {
    'incident.acknowledged': 'acknowledged',
    'incident.unacknowledged': 'triggered',
    'incident.resolved': 'resolved',
  } as const;
  const act: PagerDutyFake['act'] = async (to, spec) => {
    const alert = alerts.get(spec.dedupKey);
    const status = STATUS_AFTER[spec.eventType as keyof typeof STATUS_AFTER];
    // The act is the incident's: every alert it groups follows.
    for (const a of opened)
      if (alert && status && a.incident === alert.incident && a.status !== 'resolved') a.status = status;
    const body = JSON.stringify({
      event: {
        id: `01${randomBytes(12).toString('hex').toUpperCase()}`,
        event_type: spec.eventType,
        resource_type: 'incident',
        occurred_at: new Date(spec.occurredAt ?? Date.now()).toISOString(),
        agent:
          spec.agent === null
            ? null
            : {
                html_url: 'https://acme.pagerduty.com/users/PLH1HKV',
                id: 'PLH1HKV',
                self: 'https://api.pagerduty.com/users/PLH1HKV',
                summary: spec.agent,
                type: 'user_reference',
              },
        client: null,
        data: {
          id: alert?.incident ?? 'PGR0VU2',
          type: 'incident',
          self: `https://api.pagerduty.com/incidents/${alert?.incident ?? 'PGR0VU2'}`,
          html_url: `https://acme.pagerduty.com/incidents/${alert?.incident ?? 'PGR0VU2'}`,
          number: 2,
          status: alert?.status ?? 'triggered',
          incident_key: spec.dedupKey,
          title: alert?.summary ?? 'A little bump in the road',
          urgency: 'high',
        },
      },
    });
    const signatures = spec.signatures ?? [pagerdutyWebhookSignature(to.secret, body)];
    const sent = {
      body,
      headers: { 'x-pagerduty-signature': signatures.join(','), 'user-agent': 'PagerDuty-Webhook/V3.0' },
    };
    return { status: await postWebhook(to.url, sent), sent };
  };
  const group: PagerDutyFake['group'] = (dedupKeys) => {
    const grouped = dedupKeys.map((key) => {
      const known = alerts.get(key);
      if (known) return known;
      const foreign: PagerDutyAlert = {
        dedupKey: key,
        status: 'triggered',
        severity: 'error',
        summary: "Another tool's alert",
        triggers: 1,
        last: { routing_key: routingKey, event_action: 'trigger', dedup_key: key },
        incident: incidentId(),
      };
      alerts.set(key, foreign);
      opened.push(foreign);
      return foreign;
    });
    const incident = grouped[0]!.incident;
    for (const a of grouped) a.incident = incident;
    return incident;
  };
  const fake = Object.assign(service, {
    routingKey,
    alerts,
    opened,
    events,
    changes,
    ignored,
    invalid,
    apiKey,
    maxLimit: 100,
    group,
    act,
  });
  return fake;
}
