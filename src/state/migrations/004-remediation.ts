import { defineMigration } from '../migration.js';

/**
 * The remediation stage's tables (owned by `src/remediation/`):
 * - `remediation_attempts`: one row per idempotency key. Written with status `planned` in the SAME
 *   transaction as the decision to act, before any request is sent, so a crash at any moment leaves
 *   either no attempt or one whose key and body are known and will be re-sent as they are.
 *   `status`: `planned` (to send, or to send again with the same key), `following` (the change was
 *   taken; its run is polled), `finished` (`outcome` says how it ended). `counted` is 1 once the
 *   change is known or possibly taken (started, already running, key reused, answer unknown):
 *   only those count toward a policy's `max_attempts`; a plain refusal (locked, in_progress…)
 *   changed nothing and does not.
 *   `life` is the alert life (its fired_at) the attempt was planned in: a stop (not_retryable)
 *   holds for that life only; attempts count toward max_attempts across lives.
 * - `remediation_audit`: every decision (acted, skipped and why, dry run), every answer and every
 *   outcome, with time, policy, record and key. Pruned by retention on `at`.
 * - `remediation_skip_state`: the last skip/dry-run reason recorded per (policy, record, alert
 *   life), so a skip is written to the audit when its reason changes, not every cycle.
 * - `remediation_suspensions`: policies suspended by a refusal that only a person can fix
 *   (writes_disabled, plan_required, function_not_allowed, access_denied…); cleared when the
 *   remediator starts (daemon start or config reload).
 * Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  4,
  'remediation',
  (d) => `
    CREATE TABLE remediation_attempts (
      id              ${d.serialKey},
      policy          TEXT    NOT NULL,
      action          TEXT    NOT NULL,
      record_type     TEXT    NOT NULL,
      record_id       ${d.int64} NOT NULL,
      attempt         INTEGER NOT NULL,
      idempotency_key TEXT    NOT NULL UNIQUE,
      body            TEXT    NOT NULL,
      fingerprint     TEXT    NOT NULL,
      labels          TEXT    NOT NULL,
      severity        TEXT    NOT NULL,
      summary         TEXT    NOT NULL,
      url             TEXT,
      life            ${d.int64} NOT NULL,
      status          TEXT    NOT NULL CHECK (status IN ('planned', 'following', 'finished')),
      counted         INTEGER NOT NULL DEFAULT 0,
      planned_at      ${d.int64} NOT NULL,
      first_sent_at   ${d.int64},
      last_sent_at    ${d.int64},
      send_count      INTEGER NOT NULL DEFAULT 0,
      next_at         ${d.int64},
      answer          TEXT,
      run_id          ${d.int64},
      follow_until    ${d.int64},
      outcome         TEXT,
      outcome_detail  TEXT,
      finished_at     ${d.int64},
      UNIQUE (policy, record_type, record_id, attempt)
    )${d.strict};

    CREATE INDEX remediation_attempts_record ON remediation_attempts (policy, record_type, record_id);
    CREATE INDEX remediation_attempts_due ON remediation_attempts (status, next_at) WHERE status <> 'finished';
    CREATE INDEX remediation_attempts_planned_at ON remediation_attempts (planned_at);

    CREATE TABLE remediation_audit (
      id              ${d.serialKey},
      at              ${d.int64} NOT NULL,
      policy          TEXT    NOT NULL,
      action          TEXT    NOT NULL,
      record_type     TEXT,
      record_id       ${d.int64},
      fingerprint     TEXT,
      decision        TEXT    NOT NULL,
      reason          TEXT    NOT NULL,
      idempotency_key TEXT,
      answer          TEXT,
      outcome         TEXT,
      run_id          ${d.int64},
      detail          TEXT
    )${d.strict};

    CREATE INDEX remediation_audit_at ON remediation_audit (at);

    CREATE TABLE remediation_skip_state (
      policy      TEXT    NOT NULL,
      record_type TEXT    NOT NULL,
      record_id   ${d.int64} NOT NULL,
      life        ${d.int64} NOT NULL,
      reason      TEXT    NOT NULL,
      at          ${d.int64} NOT NULL,
      PRIMARY KEY (policy, record_type, record_id)
    )${d.strict};

    CREATE TABLE remediation_suspensions (
      policy     TEXT    PRIMARY KEY,
      action     TEXT    NOT NULL,
      code       TEXT    NOT NULL,
      message    TEXT    NOT NULL,
      at         ${d.int64} NOT NULL
    )${d.strict};
  `,
);
