import { defineMigration } from '../migration.js';

/**
 * The alert lifecycle's tables (owned by `src/alerts/`):
 * - `alerts`: one row per fingerprint, its current life (pending → firing → resolved). Resolved rows
 *   stay until retention prunes them (`status = 'resolved' AND resolved_at < cutoff`); a finding
 *   that comes back starts a new life in the same row.
 * - `events`: every `firing | repeat | escalated | resolved` written, with the AlertEvent (minus its
 *   id, which is the row id) as JSON; pruned by `at`.
 * - `silences`: operator-made mutes by label matchers; `expired_at` is set by `unsilence`.
 * Times are milliseconds since the epoch (`int64`); JSON columns hold objects.
 */
export default defineMigration(
  2,
  'alerts',
  (d) => `
    CREATE TABLE alerts (
      fingerprint      TEXT    PRIMARY KEY,
      job              TEXT    NOT NULL,
      check_name       TEXT    NOT NULL,
      status           TEXT    NOT NULL CHECK (status IN ('pending', 'firing', 'resolved')),
      severity         TEXT    NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
      summary          TEXT    NOT NULL,
      details          TEXT    NOT NULL,
      labels           TEXT    NOT NULL,
      url              TEXT,
      since            TEXT,
      subject          TEXT,
      first_seen_at    ${d.int64} NOT NULL,
      last_seen_at     ${d.int64} NOT NULL,
      seen_count       INTEGER NOT NULL,
      fired_at         ${d.int64},
      last_notified_at ${d.int64},
      resolved_at      ${d.int64}
    )${d.strict};

    -- Each cycle loads one job's open alerts; commands list all open ones.
    CREATE INDEX alerts_open_by_job ON alerts (job, fingerprint) WHERE status <> 'resolved';
    -- Retention prunes resolved rows by age.
    CREATE INDEX alerts_resolved_at ON alerts (resolved_at) WHERE status = 'resolved';

    CREATE TABLE events (
      id          ${d.serialKey},
      fingerprint TEXT    NOT NULL,
      kind        TEXT    NOT NULL CHECK (kind IN ('firing', 'repeat', 'escalated', 'resolved')),
      at          ${d.int64} NOT NULL,
      payload     TEXT    NOT NULL
    )${d.strict};

    CREATE INDEX events_at ON events (at);
    CREATE INDEX events_fingerprint ON events (fingerprint, id);

    CREATE TABLE silences (
      id          TEXT    PRIMARY KEY,
      matchers    TEXT    NOT NULL,
      starts_at   ${d.int64} NOT NULL,
      ends_at     ${d.int64} NOT NULL,
      created_by  TEXT    NOT NULL,
      reason      TEXT    NOT NULL,
      created_at  ${d.int64} NOT NULL,
      expired_at  ${d.int64}
    )${d.strict};

    -- The router asks for the silences in force now: not expired by hand and not past ends_at.
    CREATE INDEX silences_ends_at ON silences (ends_at) WHERE expired_at IS NULL;
  `,
);
