import { defineMigration } from '../migration.js';

/**
 * Acknowledgement, a state of a firing alert (owned by `src/alerts/`):
 * - `alerts.acknowledged_at`, `acknowledged_by`, `acknowledged_via` (`console`, `cli` or `slack`),
 *   `acknowledge_comment`: the acknowledgement in force on the alert's current life, all NULL when
 *   there is none. Columns of the alert rather than a table of their own: an alert has at most one
 *   acknowledgement at a time, it belongs to the alert's life (a resolve or an escalation ends it,
 *   a new life starts without), and the lifecycle reads it with the row it already reads every
 *   cycle, with no join. Its history is in `events`, like everything else that happened to an alert.
 * - `events` widened to allow the kinds `acknowledged` and `unacknowledged` (its CHECK named the
 *   lifecycle's four). PostgreSQL alters the CHECK in place. SQLite cannot, so there the table is
 *   rebuilt: every row is kept with its id, and the id sequence goes on from where it was, so no
 *   new event takes the id of a pruned one that an outbox row may still name.
 * - `unrouted_events`: an acknowledgement event written by whoever acknowledged (the console, the
 *   CLI in another process, Slack), in the same transaction as the event; the daemon's delivery
 *   round routes it through the outbox and deletes the row in one transaction, so each is routed
 *   once, whichever process wrote it.
 * Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  9,
  'acknowledge',
  (d) => `
    ALTER TABLE alerts ADD COLUMN acknowledged_at ${d.int64};
    ALTER TABLE alerts ADD COLUMN acknowledged_by TEXT;
    ALTER TABLE alerts ADD COLUMN acknowledged_via TEXT CHECK (acknowledged_via IN ('console', 'cli', 'slack'));
    ALTER TABLE alerts ADD COLUMN acknowledge_comment TEXT;

    ${d.choose({
      // SQLite cannot alter a CHECK: the table is rebuilt.
      sqlite: `CREATE TABLE events_009 (
      id          INTEGER PRIMARY KEY AUTOINCREMENT,
      fingerprint TEXT    NOT NULL,
      kind        TEXT    NOT NULL CHECK (kind IN ('firing', 'repeat', 'escalated', 'resolved', 'acknowledged', 'unacknowledged')),
      at          INTEGER NOT NULL,
      payload     TEXT    NOT NULL
    ) STRICT;
    INSERT INTO events_009 (id, fingerprint, kind, at, payload) SELECT id, fingerprint, kind, at, payload FROM events;
    -- The old sequence is at least the largest id copied: it goes with the table.
    DELETE FROM sqlite_sequence WHERE name = 'events_009';
    UPDATE sqlite_sequence SET name = 'events_009' WHERE name = 'events';
    DROP TABLE events;
    ALTER TABLE events_009 RENAME TO events;
    CREATE INDEX events_at ON events (at);
    CREATE INDEX events_fingerprint ON events (fingerprint, id);`,
      // PostgreSQL alters a CHECK in place: no rebuild, the identity goes on as it was.
      postgres: `ALTER TABLE events DROP CONSTRAINT events_kind_check;
    ALTER TABLE events ADD CONSTRAINT events_kind_check
      CHECK (kind IN ('firing', 'repeat', 'escalated', 'resolved', 'acknowledged', 'unacknowledged'));`,
    })}

    CREATE TABLE unrouted_events (
      event_id  ${d.int64} PRIMARY KEY,
      queued_at ${d.int64} NOT NULL
    )${d.strict};
  `,
);
