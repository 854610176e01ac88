import type { Migration } from '../../migration.js';

/**
 * PostgreSQL's `../009-acknowledge.ts`: the acknowledgement columns of an alert, the `events` kinds
 * widened to take `acknowledged` and `unacknowledged` (PostgreSQL alters a CHECK in place: no
 * rebuild, the identity goes on as it was), and `unrouted_events`.
 */
const acknowledge: Migration = {
  version: 9,
  name: 'acknowledge',
  up: `
    ALTER TABLE alerts ADD COLUMN acknowledged_at BIGINT;
    ALTER TABLE alerts ADD COLUMN acknowledged_by TEXT;
    ALTER TABLE alerts ADD COLUMN acknowledged_via TEXT CHECK (acknowledged_via IN ('console', 'cli', 'slack'));
    ALTER TABLE alerts ADD COLUMN acknowledge_comment TEXT;

    ALTER TABLE events DROP CONSTRAINT events_kind_check;
    ALTER TABLE events ADD CONSTRAINT events_kind_check
      CHECK (kind IN ('firing', 'repeat', 'escalated', 'resolved', 'acknowledged', 'unacknowledged'));

    CREATE TABLE unrouted_events (
      event_id  BIGINT PRIMARY KEY,
      queued_at BIGINT NOT NULL
    );
  `,
};

export default acknowledge;
