/**
 * What an on-call tool's webhook asks of an alert here, once read (`pagerduty-webhook.ts`,
 * `opsgenie-webhook.ts`), and the pieces their checks share. Pure.
 */
import type { z } from 'zod';

/** Take the alert, or give it back; `key` is the tool's key of the alert (dedup_key, alias), `by` who (as the tool names them; may be empty). */
export interface OnCallAct {
  act: 'acknowledge' | 'unacknowledge';
  key: string;
  by: string;
  /** When it was done in the tool (ms), where the tool says (PagerDuty's `occurred_at`, Opsgenie's `updatedAt`): an act older than what is known since is let be. */
  at?: number | undefined;
  /**
   * The tool's incident, which may group several of our alerts besides the one `key` names
   * (PagerDuty's incident id); absent: the one alert.
   */
  incident?: string | undefined;
}

/**
 * A webhook read: what to do (or why nothing), what the tool said (its event type, its action),
 * and an id against replays.
 */
export type OnCallRead = { ok: true; id: string; what: string; act: OnCallAct | null } | { ok: false; reason: string };

/** A body read as JSON through `schema` (the fields used), or why it cannot be: `what` it should be. */
export function readJsonBody<T>(
  body: string,
  schema: z.ZodType<T>,
  what: string,
): { ok: true; data: T } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the body is not JSON' };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, data: parsed.data } : { ok: false, reason: `the body is not ${what}` };
}
