import { defineMigration } from '../migration.js';

/**
 * The notification pipeline's tables (owned by `src/notify/`):
 * - `outbox`: one row per (event or notice, channel), written in the transaction of the change that
 *   caused it. `status`: `pending` (to send), `held` (inhibited or in a mute window; re-decided
 *   every delivery round), `sent`, `suppressed` (decided not to send: the `decision` says why, kept
 *   for the audit), `expired` (not delivered within `max_age`). `payload` is the AlertEvent or the
 *   NoticeNotification itself, so a row is rendered without reading anything else.
 * - `notification_log`: per (fingerprint, channel) what that channel was last told and when, so
 *   each route keeps its own repeat interval and a resolve is sent only where the firing was
 *   (Alertmanager's nflog).
 * - `notify_channel_state`: per channel, a pause (Slack's Retry-After) and consecutive failures,
 *   kept across restarts.
 * - `notify_digest_log`: one row per (channel, local day) a digest was queued, so a restart never
 *   sends the day's digest twice.
 * Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  3,
  'notify',
  (d) => `
    CREATE TABLE outbox (
      id              ${d.serialKey},
      channel         TEXT    NOT NULL,
      route           TEXT    NOT NULL,
      source          TEXT    NOT NULL CHECK (source IN ('event', 'notice')),
      event_id        ${d.int64},
      fingerprint     TEXT,
      kind            TEXT    NOT NULL,
      payload         TEXT    NOT NULL,
      group_key       TEXT    NOT NULL,
      status          TEXT    NOT NULL CHECK (status IN ('pending', 'held', 'sent', 'suppressed', 'expired')),
      decision        TEXT    NOT NULL,
      detail          TEXT,
      held_by         TEXT,
      attempts        INTEGER NOT NULL DEFAULT 0,
      created_at      ${d.int64} NOT NULL,
      due_since       ${d.int64},
      next_attempt_at ${d.int64},
      sent_at         ${d.int64},
      last_error      TEXT,
      updated_at      ${d.int64} NOT NULL
    )${d.strict};

    -- The delivery loop's claim: a channel's due rows, oldest first.
    CREATE INDEX outbox_due ON outbox (channel, next_attempt_at, id) WHERE status = 'pending';
    -- Held rows are re-decided every round; an event supersedes the held rows of its fingerprint.
    CREATE INDEX outbox_held ON outbox (fingerprint, channel) WHERE status = 'held';
    CREATE INDEX outbox_created_at ON outbox (created_at);

    CREATE TABLE notification_log (
      fingerprint  TEXT    NOT NULL,
      channel      TEXT    NOT NULL,
      last_kind    TEXT    NOT NULL,
      announced_at ${d.int64} NOT NULL,
      last_sent_at ${d.int64},
      PRIMARY KEY (fingerprint, channel)
    )${d.strict};

    CREATE TABLE notify_channel_state (
      channel              TEXT    PRIMARY KEY,
      paused_until         ${d.int64},
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      last_error           TEXT
    )${d.strict};

    CREATE TABLE notify_digest_log (
      channel    TEXT    NOT NULL,
      day        TEXT    NOT NULL,
      created_at ${d.int64} NOT NULL,
      PRIMARY KEY (channel, day)
    )${d.strict};
  `,
);
