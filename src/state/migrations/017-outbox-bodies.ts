import { defineMigration } from '../migration.js';

/**
 * One copy of what a notification says per event, not one per channel. An event routed to three
 * channels wrote its AlertEvent three times, once in each outbox row's `payload` (besides the
 * `events` row): a 7 MB attention reason was 21 MB of outbox. Now the event or notice is stored
 * once in `outbox_bodies` and each row names it by `body_id`, its own `payload` left empty; a row
 * written before this migration keeps its payload and no body. A body goes with the last row
 * naming it (retention). Written in the transaction that writes its rows, so a crash leaves
 * both or neither.
 */
export default defineMigration(
  17,
  'outbox-bodies',
  (d) => `
    CREATE TABLE outbox_bodies (
      body_id   ${d.serialKey},
      body      TEXT    NOT NULL,
      stored_at ${d.int64} NOT NULL
    )${d.strict};

    ALTER TABLE outbox ADD COLUMN body_id ${d.int64};
    CREATE INDEX outbox_body ON outbox (body_id) WHERE body_id IS NOT NULL;
  `,
);
