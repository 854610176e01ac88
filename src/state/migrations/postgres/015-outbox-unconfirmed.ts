import type { Migration } from '../../migration.js';

/** PostgreSQL's `../015-outbox-unconfirmed.ts`: unconfirmed sends of an outbox row. */
const outboxUnconfirmed: Migration = {
  version: 15,
  name: 'outbox-unconfirmed',
  up: `
    ALTER TABLE outbox ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
  `,
};

export default outboxUnconfirmed;
