/**
 * The audit of clicks on the Slack app's buttons (`slack_interactions`, migration 011): one row per
 * click that reached the daemon, what came of it and why, read by the console's alert timeline.
 * Row ⇄ object mapping lives here and nowhere else.
 */
import type { Store } from '../state/store.js';
import { camelRow } from '../state/camel-row.js';

/** What came of a click. */
export type InteractionOutcome =
  /** It changed something: acknowledged, silenced, an attempt planned. */
  | 'done'
  /** Nothing to change: taken already, silenced already, an attempt under way, a dry run. */
  | 'unchanged'
  /** That person may not do that (`interactions.allow`). */
  | 'refused'
  /** The alert or the message is over (or not ours): too late. */
  | 'stale'
  /** Our fault (the state, Slack's answer): nothing may have changed. */
  | 'failed';

/** One click as the audit keeps it (times in ms since the epoch). */
export interface InteractionRow {
  at: number;
  /** The name in `notify.channels` of the message clicked; '' when it is not one of ours. */
  channel: string;
  /** The Slack user ID. */
  slackUser: string;
  /** The name Slack gave with the click (their text: shown, never obeyed); null when none. */
  userName: string | null;
  /** What the button does (`acknowledge`, `silence_1h`, …). */
  action: string;
  /** The alert clicked; null when it could not be told. */
  fingerprint: string | null;
  outcome: InteractionOutcome;
  /** What came of it, in words. */
  detail: string;
}

/** The columns an {@link InteractionRow} is read from, each under its camelCase name. */
const COLUMNS = 'at, channel, slack_user, user_name, action, fingerprint, outcome, detail';

/** Writes one click's row. */
export function recordInteraction(store: Store, row: InteractionRow): void {
  // In a transaction, as every write is: a leader's store fences it (`StoreOptions.writeGuard`).
  store.transaction(() =>
    store.db
      .prepare(
        `INSERT INTO slack_interactions (at, channel, slack_user, user_name, action, fingerprint, outcome, detail)
       VALUES (@at, @channel, @slackUser, @userName, @action, @fingerprint, @outcome, @detail)`,
      )
      .run(row),
  );
}

/** The clicks on an alert's buttons, oldest first. */
export function listInteractions(store: Store, options: { fingerprint: string }): InteractionRow[] {
  const rows = store.db
    .prepare(`SELECT ${COLUMNS} FROM slack_interactions WHERE fingerprint = ? ORDER BY at, id`)
    .all(options.fingerprint) as Record<string, unknown>[];
  return rows.map((r) => camelRow<InteractionRow>(r));
}
