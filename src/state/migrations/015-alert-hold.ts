import type { Migration } from '../migration.js';

/**
 * Why a pending alert waits, kept with it (owned by `src/alerts/`): `alerts.hold_until` (INTEGER
 * ms since the epoch) is when the hold its detector asked for (`holdForMs`) is over, and
 * `hold_reason` what it waits for ("waiting up to 20m (checks.attention.fold_wait) for failed_runs
 * to report run 123"). Both NULL when the alert waits for no hold: then only `alerts.for` (its
 * cycles) keeps it pending. `deploy-watchdog alerts` and the console read them to give the true
 * reason, which the row alone (its cycles seen) could not tell.
 */
const alertHold: Migration = {
  version: 15,
  name: 'alert-hold',
  up: `
    ALTER TABLE alerts ADD COLUMN hold_until INTEGER;
    ALTER TABLE alerts ADD COLUMN hold_reason TEXT;
  `,
};

export default alertHold;
