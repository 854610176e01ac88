import type { Migration } from '../../migration.js';

/** PostgreSQL's `../014-time-to-alert.ts`: how soon each new problem was told. */
const timeToAlert: Migration = {
  version: 14,
  name: 'time-to-alert',
  up: `
    CREATE TABLE time_to_alert (
      event_id     BIGINT  PRIMARY KEY,
      check_name   TEXT    NOT NULL,
      channel      TEXT    NOT NULL,
      record_at    BIGINT  NOT NULL,
      delivered_at BIGINT  NOT NULL
    );

    CREATE INDEX time_to_alert_delivered_at ON time_to_alert (delivered_at);
  `,
};

export default timeToAlert;
