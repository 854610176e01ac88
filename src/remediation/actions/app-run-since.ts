/**
 * How an app change whose answer was lost (`idempotency_key_reused`) finds the run it started:
 * the newest run of the app, of the change's kind, created since the first send. The reference
 * leaves action and workflow words open, so the kind is a word either of them mentions.
 */
import type { ApiClient } from '../../api/client.js';
import { parseTime } from '../../lib/parse-time.js';
import type { AttemptFacts } from './action.js';

/**
 * How far before our first send a run may have been created and still be the one it started:
 * the service's clock and ours differ a little.
 */
export const CLOCK_SLACK_MS = 2 * 60_000;

/** The id of the newest run of the app whose action or workflow matches `kind`, created since the first send; null: none. */
export async function appRunSince(
  client: ApiClient,
  facts: AttemptFacts,
  kind: RegExp,
  signal?: AbortSignal,
): Promise<number | null> {
  const page = await client.runs.list({ app_id: facts.recordId, limit: 20 }, signal ? { signal } : {});
  return madeSinceFirstSend(
    facts,
    page.items.filter((r) => kind.test(`${r.action} ${r.workflow}`)),
    (r) => r.created_at,
  );
}

/**
 * The id of the first of `items` (newest first, as the service lists them) made since the
 * attempt's first send, less {@link CLOCK_SLACK_MS}; one without a readable time counts as made
 * since. Null: none.
 */
export function madeSinceFirstSend<T extends { id: number }>(
  facts: AttemptFacts,
  items: readonly T[],
  madeAt: (item: T) => string | null | undefined,
): number | null {
  const since = (facts.firstSentAt ?? facts.plannedAt) - CLOCK_SLACK_MS;
  return items.find((item) => !((parseTime(madeAt(item)) ?? NaN) < since))?.id ?? null;
}
