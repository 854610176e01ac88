import { defineMigration } from '../migration.js';

/**
 * The Slack app channel's living messages (owned by `src/notify/channels/slack-app-link-store.ts`): one
 * message per (channel, alert group), posted once and updated in place, so the link to it must
 * outlive a restart or a crash.
 * - `slack_app_messages`: one row per living message. `status`: `posting` (the intent, written
 *   and committed before `chat.postMessage`: after a crash it is looked for in Slack by its `token`,
 *   carried in the message's metadata, and adopted), `open` (posted: `slack_channel` and `ts` say
 *   where), `closed` (every alert in it resolved, or replaced: `closed_reason` says why). At most
 *   one `posting` or `open` row per (channel, group_key): never a second living message.
 *   `notes`: JSON array of the latest lines about its alerts that are not alert events (a
 *   remediation's outcome), shown on the message. `routes`: JSON array of the routes its events
 *   came by (their runbooks).
 * - `slack_app_message_alerts`: what the message shows of each alert: the latest event delivered
 *   to it (AlertEvent JSON), so an update shows every alert of the group, not only the new ones,
 *   and an alert's living message can be found by its fingerprint.
 * Neither holds the bot token. Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  10,
  'slack-app',
  (d) => `
    CREATE TABLE slack_app_messages (
      id            ${d.serialKey},
      channel       TEXT    NOT NULL,
      group_key     TEXT    NOT NULL,
      status        TEXT    NOT NULL CHECK (status IN ('posting', 'open', 'closed')),
      token         TEXT    NOT NULL UNIQUE,
      slack_channel TEXT    NOT NULL,
      ts            TEXT,
      notes         TEXT    NOT NULL DEFAULT '[]',
      routes        TEXT    NOT NULL DEFAULT '[]',
      created_at    ${d.int64} NOT NULL,
      updated_at    ${d.int64} NOT NULL,
      closed_at     ${d.int64},
      closed_reason TEXT
    )${d.strict};

    CREATE UNIQUE INDEX slack_app_messages_living ON slack_app_messages (channel, group_key)
      WHERE status <> 'closed';
    CREATE INDEX slack_app_messages_ts ON slack_app_messages (slack_channel, ts);

    CREATE TABLE slack_app_message_alerts (
      message_id  ${d.int64} NOT NULL REFERENCES slack_app_messages (id) ON DELETE CASCADE,
      fingerprint TEXT    NOT NULL,
      event       TEXT    NOT NULL,
      PRIMARY KEY (message_id, fingerprint)
    )${d.strict};

    CREATE INDEX slack_app_message_alerts_fingerprint ON slack_app_message_alerts (fingerprint);
  `,
);
