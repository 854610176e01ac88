import type { Migration } from '../migration.js';

/**
 * How soon each new problem was told (owned by `src/notify/time-to-alert-store.ts`): one row per
 * firing event, written in the transaction that marks its first successful delivery, on whichever
 * channel was first; the later channels' deliveries find the row there and add nothing.
 * - `record_at`: the record's own time of the problem (a run's `updated_at`, a URL's
 *   `public_checked_at`, an app's `updated_at`: `recordTimeOf` in `src/notify/time-to-alert.ts`);
 * - `delivered_at`: that first delivery. Their difference is `deploy_watchdog_time_to_alert_seconds`;
 *   the console reads the recent ones back for its percentiles. Pruned by `delivered_at`.
 * Times are INTEGER milliseconds since the epoch.
 */
const timeToAlert: Migration = {
  version: 14,
  name: 'time-to-alert',
  up: `
    CREATE TABLE time_to_alert (
      event_id     INTEGER PRIMARY KEY,
      check_name   TEXT    NOT NULL,
      channel      TEXT    NOT NULL,
      record_at    INTEGER NOT NULL,
      delivered_at INTEGER NOT NULL
    ) STRICT;

    CREATE INDEX time_to_alert_delivered_at ON time_to_alert (delivered_at);
  `,
};

export default timeToAlert;
