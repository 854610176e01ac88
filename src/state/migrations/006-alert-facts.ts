import { defineMigration } from '../migration.js';

/**
 * What a reader is shown of an alert, as its check chose it when it found the problem (owned by
 * `src/alerts/`):
 * - `alerts.facts`: JSON array of `{ label, value, kind? }`, the facts shown under the summary;
 * - `alerts.brief`: the one-line form for compact messages, NULL when the summary says it best.
 * Rows written before this version have `facts` NULL: their events are shown by the check's
 * presentation of their details, as they were before, and the lifecycle fills both in the next time
 * it sees the problem.
 */
export default defineMigration(
  6,
  'alert-facts',
  `
    ALTER TABLE alerts ADD COLUMN facts TEXT;
    ALTER TABLE alerts ADD COLUMN brief TEXT;
  `,
);
