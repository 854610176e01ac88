import { defineMigration } from '../migration.js';

/**
 * What the web console writes and reads (owned by `src/alerts/` and the stores the console reads):
 * - `silences.expired_by`, `silences.expire_reason`: who ended a silence by hand, and why (the
 *   console asks for both; `unsilence` records its user). NULL for silences that ran their course,
 *   and for those ended before this version.
 * - indexes for an alert's timeline: its notifications (outbox rows), remediation attempts and
 *   audit rows, looked up by fingerprint.
 */
export default defineMigration(
  7,
  'console',
  `
    ALTER TABLE silences ADD COLUMN expired_by TEXT;
    ALTER TABLE silences ADD COLUMN expire_reason TEXT;
    CREATE INDEX outbox_fingerprint ON outbox (fingerprint, id) WHERE fingerprint IS NOT NULL;
    CREATE INDEX remediation_attempts_fingerprint ON remediation_attempts (fingerprint);
    CREATE INDEX remediation_audit_fingerprint ON remediation_audit (fingerprint) WHERE fingerprint IS NOT NULL;
  `,
);
