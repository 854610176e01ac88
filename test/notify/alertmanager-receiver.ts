/**
 * A receiver built for Alertmanager's webhook, for tests: a real HTTP server on loopback that takes
 * only what Alertmanager sends (version 4; the fields of `notify/webhook/webhook.go` and
 * `template.Data`, no other, each of its type; RFC 3339 times; a firing alert's endsAt Go's zero
 * time; the group's status from its alerts; commonLabels and commonAnnotations what every alert
 * shares; groupLabels among them and ending the groupKey) and answers anything else 400 with what
 * is wrong. Its URL carries a token in its path and its query, as real ones do, so tests can look
 * for it where it must never be.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/** Go's zero time, as Alertmanager writes a firing alert's endsAt. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A label or annotation name, as Prometheus takes one (`model.LabelName`). */
const kv = z.record(z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/), z.string());
/** RFC 3339: a date, a time and a zone (Z or an offset). */
const rfc3339 = z.iso.datetime({ offset: true });
/** An http(s) URL, or empty (Alertmanager sends "" where it has none). */
const urlOrEmpty = z.union([z.literal(''), z.url({ protocol: /^https?$/ })]);

const alertSchema = z
  .object({
    status: z.enum(['firing', 'resolved']),
    labels: kv,
    annotations: kv,
    startsAt: rfc3339,
    endsAt: rfc3339,
    generatorURL: urlOrEmpty,
    fingerprint: z.string().min(1),
  })
  .strict();

/** Alertmanager's webhook payload, version 4: exactly its fields, each of its type. */
export const alertmanagerV4 = z
  .object({
    version: z.literal('4'),
    groupKey: z.string().min(1),
    truncatedAlerts: z.number().int().min(0),
    status: z.enum(['firing', 'resolved']),
    receiver: z.string().min(1),
    groupLabels: kv,
    commonLabels: kv,
    commonAnnotations: kv,
    externalURL: urlOrEmpty,
    alerts: z.array(alertSchema).min(1),
  })
  .strict()
  .superRefine((p, ctx) => {
    const problem = (message: string, path: PropertyKey[] = []) => ctx.addIssue({ code: 'custom', path, message });
    p.alerts.forEach((a, i) => {
      if (a.status === 'firing' && a.endsAt !== ZERO_TIME)
        problem('a firing alert ends at the zero time', ['alerts', i, 'endsAt']);
      if (a.status === 'resolved' && (a.endsAt === ZERO_TIME || Date.parse(a.endsAt) < Date.parse(a.startsAt))) {
        problem('a resolved alert ends at or after its start', ['alerts', i, 'endsAt']);
      }
    });
    const firing = p.alerts.some((a) => a.status === 'firing');
    // Alertmanager's group status is its alerts' (types.Alerts.Status); a cut may only hide firing ones.
    if (firing && p.status !== 'firing') problem('is resolved with a firing alert', ['status']);
    if (!firing && p.status === 'firing' && p.truncatedAlerts === 0) problem('is firing with none firing', ['status']);
    const common = (maps: Record<string, string>[]) =>
      Object.fromEntries(Object.entries(maps[0]!).filter(([k, v]) => maps.every((m) => m[k] === v)));
    if (!same(p.commonLabels, common(p.alerts.map((a) => a.labels))))
      problem('is not what every alert shares', ['commonLabels']);
    if (!same(p.commonAnnotations, common(p.alerts.map((a) => a.annotations)))) {
      problem('is not what every alert shares', ['commonAnnotations']);
    }
    for (const [k, v] of Object.entries(p.groupLabels)) {
      if (p.commonLabels[k] !== v) problem(`${k} is not a label every alert has`, ['groupLabels']);
    }
    if (!p.groupKey.endsWith(`:${labelSet(p.groupLabels)}`))
      problem('does not end with the group labels', ['groupKey']);
  });

/** A valid payload. */
export type AlertmanagerPayload = z.infer<typeof alertmanagerV4>;

/** A label set as Prometheus writes it: `{a="1", b="2"}`. */
export function labelSet(labels: Record<string, string>): string {
  return `{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(', ')}}`;
}

function same(a: Record<string, string>, b: Record<string, string>): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}

/** The problems of a body as this receiver sees them; none when Alertmanager could have sent it. */
export function v4Problems(body: unknown): string[] {
  const parsed = alertmanagerV4.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`);
}

/** How the receiver answers a valid payload: 200, another status (with headers and a body), or never. */
export type ReceiverAnswer = 'ok' | 'hang' | { status: number; headers?: Record<string, string>; body?: string };

/** A payload taken, with the request's headers. */
export interface Received {
  payload: AlertmanagerPayload;
  headers: IncomingHttpHeaders;
}

/** A running receiver. */
export interface AlertmanagerReceiver {
  /** Its URL: a token in the path and in the query. */
  readonly url: string;
  /** Both tokens of its URL, to look for where they must never be. */
  readonly secrets: readonly string[];
  /** Valid payloads answered 200, oldest first. */
  readonly received: Received[];
  /** What was wrong with each payload refused as invalid (none, when all were valid). */
  readonly invalid: string[][];
  /** Requests to its URL, answered or not. */
  readonly requests: number;
  answer(next: ReceiverAnswer): void;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1. */
export async function startAlertmanagerReceiver(): Promise<AlertmanagerReceiver> {
  const pathToken = randomBytes(12).toString('hex');
  const queryToken = randomBytes(12).toString('hex');
  const target = `/hooks/${pathToken}?key=${queryToken}`;
  const received: Received[] = [];
  const invalid: string[][] = [];
  let requests = 0;
  let next: ReceiverAnswer = 'ok';

  const reply = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== target) return reply(res, 404, 'not found');
    if (req.method !== 'POST') return reply(res, 405, 'method not allowed');
    requests += 1;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (next === 'hang') return; // never answers; close() drops the connection
    if (typeof next === 'object') return reply(res, next.status, next.body ?? '', next.headers);
    if (req.headers['content-type'] !== 'application/json') return reply(res, 415, 'not JSON');
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 400, 'malformed JSON');
    }
    const problems = v4Problems(body);
    if (problems.length > 0) {
      invalid.push(problems);
      return reply(res, 400, `invalid payload: ${problems.join('; ')}`);
    }
    received.push({ payload: body as AlertmanagerPayload, headers: req.headers });
    reply(res, 200, '');
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => reply(res, 500, 'internal error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target}`,
    secrets: [pathToken, queryToken],
    received,
    invalid,
    get requests() {
      return requests;
    },
    answer(answer) {
      next = answer;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
