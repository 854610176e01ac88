import type { Store } from '../../src/state/store.js';
import { camelRow } from '../../src/state/camel-row.js';
import type { InteractionRow } from '../../src/interactions/interaction-audit-store.js';

/**
 * Every click the audit keeps, oldest first, those on no alert of ours among them: what a test
 * looks through (the daemon reads an alert's own, `listInteractions`).
 */
export function allInteractions(store: Store): InteractionRow[] {
  const rows = store.db
    .prepare(
      'SELECT at, channel, slack_user, user_name, action, fingerprint, outcome, detail FROM slack_interactions ORDER BY at, id',
    )
    .all() as Record<string, unknown>[];
  return rows.map((r) => camelRow<InteractionRow>(r));
}
