import { defineMigration } from '../migration.js';

/**
 * When an alert is told: how soon after its problem it was, and, while it is not yet, why.
 *
 * How soon each new problem was told (owned by `src/notify/time-to-alert-store.ts`): one row per
 * firing event, written in the transaction that marks its first successful delivery, on whichever
 * channel was first; the later channels' deliveries find the row there and add nothing.
 * - `record_at`: the record's own time of the problem (a run's `updated_at`, a URL's
 *   `public_checked_at`, an app's `updated_at`: `recordTimeOf` in `src/notify/time-to-alert.ts`);
 * - `delivered_at`: that first delivery. Their difference is `deploy_watchdog_time_to_alert_seconds`;
 *   the console reads the recent ones back for its percentiles. Pruned by `delivered_at`.
 * Why a pending alert waits, kept with it (owned by `src/alerts/`): `alerts.hold_until` is when
 * the hold its detector asked for (`holdForMs`) is over, and `hold_reason` what it waits for
 * ("waiting up to 20m (checks.attention.fold_wait) for failed_runs to report run 123"). Both NULL
 * when the alert waits for no hold: then only `alerts.for` (its cycles) keeps it pending.
 * `deploy-watchdog alerts` and the console read them to give the true reason, which the row alone
 * (its cycles seen) could not tell.
 *
 * Times are milliseconds since the epoch (`int64`).
 */
export default defineMigration(
  14,
  'alert-timing',
  (d) => `
    CREATE TABLE time_to_alert (
      event_id     ${d.int64} PRIMARY KEY,
      check_name   TEXT    NOT NULL,
      channel      TEXT    NOT NULL,
      record_at    ${d.int64} NOT NULL,
      delivered_at ${d.int64} NOT NULL
    )${d.strict};

    CREATE INDEX time_to_alert_delivered_at ON time_to_alert (delivered_at);

    ALTER TABLE alerts ADD COLUMN hold_until ${d.int64};
    ALTER TABLE alerts ADD COLUMN hold_reason TEXT;
  `,
);
