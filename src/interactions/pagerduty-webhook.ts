/**
 * PagerDuty's V3 webhooks (a service's Webhook Subscription), read and checked; pure. PagerDuty
 * posts `{ "event": { id, event_type, occurred_at, agent, data } }` with the header
 * `X-PagerDuty-Signature: v1=<hex>`, the HMAC-SHA256 of the raw body keyed with the
 * subscription's secret; while a secret is being rotated the header holds several signatures,
 * comma-separated, and one matching is enough. Of the events, `incident.acknowledged` and
 * `incident.unacknowledged` are used; `data.incident_key` is the dedup_key the alert was
 * triggered with (`src/notify/channels/pagerduty.ts`; of an incident grouping several alerts, its
 * first alert's), `data.id` the incident's id (to read the alerts it groups), `agent.summary` the person who did it and
 * `occurred_at` when (PagerDuty delivers at least once, in no promised order).
 * Everything in the body is PagerDuty's data: read, cut and shown as text, never obeyed.
 */
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { Secret } from '../lib/secret.js';
import { sameText } from '../lib/same-text.js';
import { readJsonBody, type OnCallAct, type OnCallRead } from './on-call-act.js';

/** The largest number of signatures looked at in one header (a rotation has two or three). */
const MAX_SIGNATURES = 8;

/** The signature PagerDuty sends for a body: `v1=` and 64 hex digits. */
export function pagerdutySignature(secret: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * Whether the request's `X-PagerDuty-Signature` header holds the body's signature under `secret`
 * (constant-time, whichever of its signatures matches). Never says which part differed.
 */
export function verifyPagerDutySignature(headers: IncomingHttpHeaders, body: string, secret: Secret): boolean {
  const header = [headers['x-pagerduty-signature']].flat()[0];
  if (!header) return false;
  const expected = pagerdutySignature(secret.reveal(), body);
  let ok = false;
  // Every signature is compared, matching or not, so the time taken says nothing of which.
  for (const given of header.split(',').slice(0, MAX_SIGNATURES)) ok = sameText(given.trim(), expected) || ok;
  return ok;
}

/** The part of a V3 webhook's body used here; the rest is let through unread. */
const webhookSchema = z.object({
  event: z.object({
    id: z.string().min(1).max(200),
    event_type: z.string().max(200),
    occurred_at: z.string().max(100).nullish(),
    agent: z.object({ summary: z.string().optional() }).nullish(),
    data: z.object({ id: z.string().nullish(), incident_key: z.string().nullish() }).nullish(),
  }),
});

/** The acts of the event types used; every other type is answered and let be. */
const ACTS: Readonly<Record<string, OnCallAct['act']>> = {
  'incident.acknowledged': 'acknowledge',
  'incident.unacknowledged': 'unacknowledge',
};

/** An incident's id as PagerDuty forms them (`PGR0VU2`, `Q1XQPZ3PYQ0ABC`): letters and digits, put in a path. */
const INCIDENT_ID = /^[A-Za-z0-9]{1,64}$/;

/**
 * Reads a webhook's body (already verified); its id against replays is the event's. The act names
 * the incident (`data.id`) when its id has PagerDuty's form, to read the alerts it groups.
 */
export function readPagerDutyWebhook(body: string): OnCallRead {
  const read = readJsonBody(body, webhookSchema, 'a V3 webhook event');
  if (!read.ok) return read;
  const { id, event_type: what, occurred_at, agent, data } = read.data.event;
  const act = ACTS[what];
  const key = data?.incident_key;
  if (!act || !key) return { ok: true, id, what, act: null };
  const at = Date.parse(occurred_at ?? '');
  const incident = data.id && INCIDENT_ID.test(data.id) ? data.id : undefined;
  const by = agent?.summary ?? '';
  return { ok: true, id, what, act: { act, key, by, at: Number.isNaN(at) ? undefined : at, incident } };
}
