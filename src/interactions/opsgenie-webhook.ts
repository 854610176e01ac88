/**
 * Opsgenie's outgoing Webhook integration, read and checked; pure. Opsgenie posts
 * `{ action, alert: { alertId, alias, username, … }, source, integrationName, integrationType }`
 * for the alert actions the integration forwards. It signs nothing, but lets the integration add
 * custom headers: the channel's `webhook.token` is sent as `X-Deploy-Watchdog-Token: <token>` (or
 * `Authorization: Bearer <token>`) and compared in constant time. Of the actions, `Acknowledge`
 * and `UnAcknowledge` are used; `alert.alias` is the alias the alert was created with
 * (`src/notify/channels/opsgenie.ts`), `alert.username` the person who did it and
 * `alert.updatedAt` (nanoseconds) when. Everything in the body is Opsgenie's data: read, cut and
 * shown as text, never obeyed.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import type { Secret } from '../lib/secret.js';
import { sameText } from '../lib/same-text.js';
import { readJsonBody, type OnCallAct, type OnCallRead } from './on-call-act.js';

/** The custom header the Webhook integration is told to add. */
export const OPSGENIE_TOKEN_HEADER = 'x-deploy-watchdog-token';

/** Whether the request's headers carry the token, in {@link OPSGENIE_TOKEN_HEADER} or as a bearer token. */
export function verifyOpsgenieToken(headers: IncomingHttpHeaders, token: Secret): boolean {
  const bearer = /^Bearer (.+)$/i.exec(headers.authorization?.trim() ?? '')?.[1];
  const given = [headers[OPSGENIE_TOKEN_HEADER]].flat()[0]?.trim() ?? bearer?.trim();
  return given !== undefined && sameText(given, token.reveal());
}

/** The part of a webhook's body used here; the rest is let through unread. */
const webhookSchema = z.object({
  action: z.string().max(200),
  alert: z
    .object({
      alias: z.string().nullish(),
      username: z.string().nullish(),
      updatedAt: z.number().nullish(),
    })
    .nullish(),
});

/** The acts of the actions used; every other action is answered and let be. */
const ACTS: Readonly<Record<string, OnCallAct['act']>> = {
  Acknowledge: 'acknowledge',
  UnAcknowledge: 'unacknowledge',
};

/**
 * Reads a webhook's body (its token already checked). Opsgenie gives its posts no id: the one
 * against replays is the body's digest (the same body twice is the same post, since each carries
 * the alert's update time).
 */
export function readOpsgenieWebhook(body: string): OnCallRead {
  const read = readJsonBody(body, webhookSchema, 'an Opsgenie webhook');
  if (!read.ok) return read;
  const { action: what, alert } = read.data;
  const id = createHash('sha256').update(body, 'utf8').digest('hex');
  const act = ACTS[what];
  const key = alert?.alias;
  if (!act || !key) return { ok: true, id, what, act: null };
  return { ok: true, id, what, act: { act, key, by: alert.username ?? '', at: millisecondsOf(alert.updatedAt) } };
}

/**
 * The alert's update time (the act's) in ms: Opsgenie writes nanoseconds; a value that can only be
 * milliseconds is taken as such, so a change of unit never makes every act look old.
 */
function millisecondsOf(updatedAt: number | null | undefined): number | undefined {
  if (typeof updatedAt !== 'number' || !Number.isFinite(updatedAt) || updatedAt <= 0) return undefined;
  return updatedAt > 1e15 ? Math.floor(updatedAt / 1e6) : updatedAt;
}
