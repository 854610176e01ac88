/**
 * What an on-call tool's webhook asks of an alert here, once read (`pagerduty-webhook.ts`,
 * `opsgenie-webhook.ts`), and the pieces their checks share. Pure.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

/** Take the alert, or give it back; `key` is the tool's key of the alert (dedup_key, alias), `by` who (as the tool names them; may be empty). */
export interface OnCallAct {
  act: 'acknowledge' | 'unacknowledge';
  key: string;
  by: string;
}

/**
 * Whether two strings are the same, in a time that does not depend on where they differ: both are
 * hashed first, so their lengths are not compared either.
 */
export function sameText(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected)) && given === expected;
}

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
