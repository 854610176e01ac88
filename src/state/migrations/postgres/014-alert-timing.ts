import type { Migration } from '../../migration.js';

/** PostgreSQL's `../014-alert-timing.ts`: how soon each new problem was told, and why one waits. */
const alertTiming: Migration = {
  version: 14,
  name: 'alert-timing',
  up: `
    CREATE TABLE time_to_alert (
      event_id     BIGINT  PRIMARY KEY,
      check_name   TEXT    NOT NULL,
      channel      TEXT    NOT NULL,
      record_at    BIGINT  NOT NULL,
      delivered_at BIGINT  NOT NULL
    );

    CREATE INDEX time_to_alert_delivered_at ON time_to_alert (delivered_at);

    ALTER TABLE alerts ADD COLUMN hold_until BIGINT;
    ALTER TABLE alerts ADD COLUMN hold_reason TEXT;
  `,
};

export default alertTiming;
