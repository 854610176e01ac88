import { defineMigration } from '../migration.js';

/**
 * How many times an outbox row's message went out without its receipt being confirmed (an SMTP
 * server silent after the body: `unconfirmed` in `src/notify/channels/channel.ts`). The receiver
 * may have it, so the delivery loop sends such a row at most once more: at the second unconfirmed
 * send the row is recorded `sent` with the reason in `last_error`, never sent a third time.
 */
export default defineMigration(
  15,
  'outbox-unconfirmed',
  `
    ALTER TABLE outbox ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
  `,
);
