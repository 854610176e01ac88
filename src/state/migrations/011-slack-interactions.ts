import { defineMigration } from '../migration.js';

/**
 * The audit of clicks on the Slack app's buttons (owned by `src/interactions/interaction-audit-store.ts`):
 * one row per click that reached the daemon, whatever came of it, so a refused or stale click is
 * on record beside the ones that acted (those also write where their action writes: the
 * acknowledgement's event, the silence, the remediation audit).
 * - `channel`: the name in `notify.channels` of the message clicked ('' when the message is not
 *   one of ours); `slack_user`: the Slack user ID; `user_name`: the name Slack gave with it (their
 *   text, shown, never obeyed); `action`: what the button does (`acknowledge`, `silence_1h`, …).
 * - `fingerprint`: the alert clicked, NULL when it could not be told.
 * - `outcome`: `done` (it changed something), `unchanged` (nothing to change: taken already, an
 *   attempt under way), `refused` (not allowed to that person), `stale` (the alert or the message
 *   is over), `failed` (our fault: the state, Slack's answer); `detail` says it in words.
 * No token, secret or response URL is kept. Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  11,
  'slack-interactions',
  (d) => `
    CREATE TABLE slack_interactions (
      id          ${d.serialKey},
      at          ${d.int64} NOT NULL,
      channel     TEXT    NOT NULL,
      slack_user  TEXT    NOT NULL,
      user_name   TEXT,
      action      TEXT    NOT NULL,
      fingerprint TEXT,
      outcome     TEXT    NOT NULL CHECK (outcome IN ('done', 'unchanged', 'refused', 'stale', 'failed')),
      detail      TEXT    NOT NULL
    )${d.strict};

    CREATE INDEX slack_interactions_fingerprint ON slack_interactions (fingerprint, at);
    CREATE INDEX slack_interactions_at ON slack_interactions (at);
  `,
);
