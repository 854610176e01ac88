import type { Migration } from '../../migration.js';

/** PostgreSQL's `../001-core.ts`: `meta` and `source_health`. Times are BIGINT milliseconds since the epoch. */
const core: Migration = {
  version: 1,
  name: 'core',
  up: `
    CREATE TABLE meta (
      key   TEXT PRIMARY KEY,
      value TEXT NOT NULL
    );

    CREATE TABLE source_health (
      job                  TEXT    PRIMARY KEY,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      last_error           TEXT,
      last_attempt_at      BIGINT,
      last_success_at      BIGINT,
      disabled_reason      TEXT
    );
  `,
};

export default core;
