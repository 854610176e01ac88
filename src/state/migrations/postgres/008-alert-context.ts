import type { Migration } from '../../migration.js';

/** PostgreSQL's `../008-alert-context.ts`: what the API told about new alerts after their cycle. */
const alertContext: Migration = {
  version: 8,
  name: 'alert-context',
  up: `
    CREATE TABLE alert_context (
      subject      TEXT    PRIMARY KEY,
      fingerprint  TEXT    NOT NULL,
      ask          TEXT    NOT NULL,
      status       TEXT    NOT NULL CHECK (status IN ('pending', 'ready')),
      context      TEXT,
      requested_at BIGINT  NOT NULL,
      read_at      BIGINT,
      updated_at   BIGINT  NOT NULL
    );

    CREATE INDEX alert_context_pending ON alert_context (requested_at) WHERE status = 'pending';
  `,
};

export default alertContext;
