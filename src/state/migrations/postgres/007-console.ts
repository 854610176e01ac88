import type { Migration } from '../../migration.js';

/** PostgreSQL's `../007-console.ts`: who ended a silence and why, indexes for an alert's timeline. */
const consoleMigration: Migration = {
  version: 7,
  name: 'console',
  up: `
    ALTER TABLE silences ADD COLUMN expired_by TEXT;
    ALTER TABLE silences ADD COLUMN expire_reason TEXT;
    CREATE INDEX outbox_fingerprint ON outbox (fingerprint, id) WHERE fingerprint IS NOT NULL;
    CREATE INDEX remediation_attempts_fingerprint ON remediation_attempts (fingerprint);
    CREATE INDEX remediation_audit_fingerprint ON remediation_audit (fingerprint) WHERE fingerprint IS NOT NULL;
  `,
};

export default consoleMigration;
