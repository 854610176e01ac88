/**
 * A protocol-level fake of Opsgenie's Alert API (v2) for tests, on loopback. Every request must
 * carry `Authorization: GenieKey <key>` (else 401 "Could not authenticate"). It takes a create
 * (POST /v2/alerts: message of at most 130 characters, alias at most 512, description at most
 * 15000, priority P1 to P5, details a map of strings, tags at most 20), and actions on an alert by
 * its alias (`?identifierType=alias`): acknowledge, unacknowledge, close, notes (POST) and priority
 * (PUT); anything else is refused 422 or 404 as the API does. Like the API it answers 202 with
 * { result: "Request will be processed", took, requestId } and processes after: a create with the
 * alias of an open alert counts a repeat of it (`count`), one with a closed or unknown alias opens
 * a new alert; an action on an alias with no open alert is accepted and fails later, kept in
 * `failedRequests` (what GET /v2/alerts/requests/{id} would say).
 *
 * A person's act in Opsgenie (`act`: Acknowledge, UnAcknowledge, Close, AddNote) changes the alert
 * and is told as an outgoing Webhook integration does: `{ action, alert: { alertId, alias,
 * username, … }, source, integrationName, integrationType: "Webhook" }` posted with the custom
 * headers the integration was given (Opsgenie signs nothing).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  postWebhook,
  problems,
  startFakeService,
  type FakeAnswer,
  type FakeService,
  type WebhookPost,
} from './fake-service.js';

const create = z
  .object({
    message: z.string().min(1).max(130),
    alias: z.string().min(1).max(512).optional(),
    description: z.string().max(15_000).optional(),
    responders: z.array(z.unknown()).optional(),
    visibleTo: z.array(z.unknown()).optional(),
    actions: z.array(z.string()).max(10).optional(),
    tags: z.array(z.string().max(50)).max(20).optional(),
    details: z.record(z.string(), z.string()).optional(),
    entity: z.string().max(512).optional(),
    source: z.string().max(100).optional(),
    priority: z.enum(['P1', 'P2', 'P3', 'P4', 'P5']).optional(),
    user: z.string().max(100).optional(),
    note: z.string().max(25_000).optional(),
  })
  .strict();

const action = z
  .object({
    user: z.string().max(100).optional(),
    source: z.string().max(100).optional(),
    note: z.string().max(25_000).optional(),
  })
  .strict();

const note = action.extend({ note: z.string().min(1).max(25_000) }).strict();
const priority = z.object({ priority: z.enum(['P1', 'P2', 'P3', 'P4', 'P5']) }).strict();

/** An alert as Opsgenie keeps it. */
export interface OpsgenieAlert {
  alias: string;
  status: 'open' | 'closed';
  acknowledged: boolean;
  priority: string;
  message: string;
  count: number;
  details: Record<string, string>;
  description: string;
  tags: string[];
  notes: string[];
  /** Who acknowledged it, as the request said. */
  owner?: string | undefined;
}

/** The running fake. */
export interface OpsgenieFake extends FakeService {
  /** The integration's API key, to configure the channel with. */
  readonly apiKey: string;
  /** Alerts by alias: the newest one per alias. */
  readonly alerts: Map<string, OpsgenieAlert>;
  /** Alerts ever opened, in order. */
  readonly opened: OpsgenieAlert[];
  /** Actions accepted and then failed (no open alert with that alias), as "action alias". */
  readonly failedRequests: string[];
  /** What was refused, and why. */
  readonly invalid: string[][];
  /**
   * A person acts on the alert of `alias` in Opsgenie: the alert changes and the Webhook
   * integration at `to` is told, with its custom headers. Answers the status the receiver gave and
   * what was posted (to replay it).
   */
  act(
    to: { url: string; headers: Record<string, string> },
    spec: {
      alias: string;
      action: 'Acknowledge' | 'UnAcknowledge' | 'Close' | 'AddNote';
      username: string;
      /** When it was done (ms); absent: now (each act a millisecond after the last). */
      occurredAt?: number;
    },
  ): Promise<{ status: number; sent: WebhookPost }>;
}

/** Starts the fake. */
export async function startOpsgenieFake(): Promise<OpsgenieFake> {
  const apiKey = randomUUID();
  const alerts = new Map<string, OpsgenieAlert>();
  const opened: OpsgenieAlert[] = [];
  const failedRequests: string[] = [];
  const invalid: string[][] = [];

  const accepted = (): FakeAnswer => ({
    status: 202,
    body: { result: 'Request will be processed', took: 0.01, requestId: randomUUID() },
  });
  const refuse = (status: number, errors: string[]): FakeAnswer => {
    invalid.push(errors);
    return { status, body: { message: errors.join('; '), took: 0.001, requestId: randomUUID() } };
  };

  const service = await startFakeService((req) => {
    if (req.headers.authorization !== `GenieKey ${apiKey}`) {
      return refuse(401, ['Could not authenticate']);
    }
    const url = new URL(req.url, 'http://opsgenie');
    if (url.pathname === '/v2/alerts' && req.method === 'POST') {
      const parsed = create.safeParse(req.body);
      if (!parsed.success) return refuse(422, problems(parsed.error.issues));
      const c = parsed.data;
      const alias = c.alias ?? randomBytes(8).toString('hex');
      const open = alerts.get(alias);
      if (open?.status === 'open') {
        open.count++;
      } else {
        const alert: OpsgenieAlert = {
          alias,
          status: 'open',
          acknowledged: false,
          priority: c.priority ?? 'P3',
          message: c.message,
          count: 1,
          details: c.details ?? {},
          description: c.description ?? '',
          tags: c.tags ?? [],
          notes: [],
        };
        alerts.set(alias, alert);
        opened.push(alert);
      }
      return accepted();
    }
    const m = /^\/v2\/alerts\/([^/]+)\/(acknowledge|unacknowledge|close|notes|priority)$/.exec(url.pathname);
    if (!m) return refuse(404, [`no such endpoint: ${req.method} ${url.pathname}`]);
    if (url.searchParams.get('identifierType') !== 'alias') return refuse(422, ['identifierType must be alias here']);
    const alias = decodeURIComponent(m[1]!);
    const verb = m[2]!;
    const schema = verb === 'notes' ? note : verb === 'priority' ? priority : action;
    if ((verb === 'priority') !== (req.method === 'PUT') || (verb !== 'priority' && req.method !== 'POST')) {
      return refuse(405, [`${verb} takes ${verb === 'priority' ? 'PUT' : 'POST'}`]);
    }
    const parsed = schema.safeParse(req.body ?? {});
    if (!parsed.success) return refuse(422, problems(parsed.error.issues));
    const body = parsed.data as { user?: string; note?: string; priority?: string };
    const alert = alerts.get(alias);
    if (!alert || alert.status !== 'open') {
      failedRequests.push(`${verb} ${alias}`);
      return accepted();
    }
    if (verb === 'acknowledge') {
      alert.acknowledged = true;
      alert.owner = body.user;
    } else if (verb === 'unacknowledge') {
      alert.acknowledged = false;
      alert.owner = undefined;
    } else if (verb === 'close') {
      alert.status = 'closed';
    } else if (verb === 'priority') {
      alert.priority = body.priority!;
    }
    if (body.note) alert.notes.push(body.note);
    return accepted();
  });
  let updates = 0;
  const act: OpsgenieFake['act'] = async (to, spec) => {
    const alert = alerts.get(spec.alias);
    if (alert && spec.action === 'Acknowledge') [alert.acknowledged, alert.owner] = [true, spec.username];
    if (alert && spec.action === 'UnAcknowledge') [alert.acknowledged, alert.owner] = [false, undefined];
    if (alert && spec.action === 'Close') alert.status = 'closed';
    const at = spec.occurredAt ?? Date.now() + ++updates;
    const body = JSON.stringify({
      action: spec.action,
      alert: {
        alertId: randomUUID(),
        message: alert?.message ?? 'an alert',
        tags: alert?.tags ?? [],
        tinyId: '24',
        entity: '',
        alias: spec.alias,
        createdAt: at,
        // Nanoseconds, as Opsgenie writes it.
        updatedAt: at * 1_000_000,
        username: spec.username,
        userId: randomUUID(),
        source: 'web',
        note: '',
      },
      source: { name: '', type: 'web' },
      integrationName: 'deploy-watchdog back',
      integrationId: randomUUID(),
      integrationType: 'Webhook',
    });
    const sent = { body, headers: to.headers };
    return { status: await postWebhook(to.url, sent), sent };
  };
  return Object.assign(service, { apiKey, alerts, opened, failedRequests, invalid, act });
}
