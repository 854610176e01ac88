import { defineMigration } from '../migration.js';

/**
 * What remediation needs to read back a backup it took (`apps.backup`): the id the change's answer
 * gave (`backup_id`, null when it gave none or the answer was lost), and, once the backup's run
 * succeeded, until when `backups.get` is read again for its verification and off-site copies to
 * settle (`readback_until`; null: not reading back). Both null on every row written before.
 */
export default defineMigration(
  16,
  'backup-readback',
  (d) => `
    ALTER TABLE remediation_attempts ADD COLUMN backup_id ${d.int64};
    ALTER TABLE remediation_attempts ADD COLUMN readback_until ${d.int64};
  `,
);
