import { defineMigration } from '../migration.js';

/**
 * Acknowledgements given in an on-call tool: `alerts.acknowledged_via` widened to take
 * `pagerduty` and `opsgenie` (its CHECK named the surfaces of migration 9: `console`, `cli`,
 * `slack`), for an acknowledgement PagerDuty's or Opsgenie's webhook brings back
 * (`src/interactions/on-call-webhook.ts`).
 *
 * PostgreSQL alters the CHECK in place. SQLite cannot alter a CHECK, and the column's CHECK is its
 * own (added with the column by migration 9), so rather than rebuild the whole `alerts` table the
 * column is replaced: a new one with the wider CHECK takes every value, the old one is dropped
 * (SQLite allows it: no index, view or other constraint names it) and the new one takes its name.
 * No row is rewritten beyond that column, and nothing else of the table changes.
 */
export default defineMigration(18, 'on-call-acknowledge', (d) =>
  d.choose({
    sqlite: `
    ALTER TABLE alerts ADD COLUMN acknowledged_via_012 TEXT
      CHECK (acknowledged_via_012 IN ('console', 'cli', 'slack', 'pagerduty', 'opsgenie'));
    UPDATE alerts SET acknowledged_via_012 = acknowledged_via WHERE acknowledged_via IS NOT NULL;
    ALTER TABLE alerts DROP COLUMN acknowledged_via;
    ALTER TABLE alerts RENAME COLUMN acknowledged_via_012 TO acknowledged_via;`,
    postgres: `
    ALTER TABLE alerts DROP CONSTRAINT alerts_acknowledged_via_check;
    ALTER TABLE alerts ADD CONSTRAINT alerts_acknowledged_via_check
      CHECK (acknowledged_via IN ('console', 'cli', 'slack', 'pagerduty', 'opsgenie'));`,
  }),
);
