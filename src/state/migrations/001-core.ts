import { defineMigration } from '../migration.js';

/**
 * The tables every other stage leans on: `meta` (small key/value facts such as the last
 * successful cycle) and `source_health` (one row per collector job, counting consecutive failed
 * cycles so a "cannot read" alert fires only after `checks.sources.failure_threshold`).
 */
export default defineMigration(
  1,
  'core',
  (d) => `
    CREATE TABLE meta (
      key   TEXT PRIMARY KEY,
      value TEXT NOT NULL
    )${d.strict};

    CREATE TABLE source_health (
      job                  TEXT PRIMARY KEY,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      last_error           TEXT,
      last_attempt_at      ${d.int64},
      last_success_at      ${d.int64},
      disabled_reason      TEXT
    )${d.strict};
  `,
);
