import type { Migration } from '../../migration.js';

/** PostgreSQL's `../015-alert-hold.ts`: why a pending alert waits, and until when. */
const alertHold: Migration = {
  version: 15,
  name: 'alert-hold',
  up: `
    ALTER TABLE alerts ADD COLUMN hold_until BIGINT;
    ALTER TABLE alerts ADD COLUMN hold_reason TEXT;
  `,
};

export default alertHold;
