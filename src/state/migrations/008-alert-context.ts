import { defineMigration } from '../migration.js';

/**
 * What the API told about new alerts after their cycle (owned by `src/context/`): one row per run
 * asked about (`subject`, `run/5981`), so a run is read once however many of its alerts fire or
 * escalate, and neither a restart nor a reload reads it again.
 * - `status`: `pending` (asked in the cycle's transaction, not read yet: read after a restart too)
 *   or `ready` (`context` holds the AlertContext JSON, which may only say what could not be read).
 * - `fingerprint`: the alert that asked; retention keeps the row while that alert is open.
 * - `ask`: the RunContextAsk JSON (run, app, workflow, action, when it failed).
 * Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  8,
  'alert-context',
  (d) => `
    CREATE TABLE alert_context (
      subject      TEXT    PRIMARY KEY,
      fingerprint  TEXT    NOT NULL,
      ask          TEXT    NOT NULL,
      status       TEXT    NOT NULL CHECK (status IN ('pending', 'ready')),
      context      TEXT,
      requested_at ${d.int64} NOT NULL,
      read_at      ${d.int64},
      updated_at   ${d.int64} NOT NULL
    )${d.strict};

    -- The reader's claim: pending asks, oldest first.
    CREATE INDEX alert_context_pending ON alert_context (requested_at) WHERE status = 'pending';
  `,
);
