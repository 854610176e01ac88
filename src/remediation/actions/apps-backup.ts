/**
 * `apps.backup`: takes a backup of an app whose backups are in trouble in a way one more backup
 * fixes: the newest is too old or missing (`stale`), the newest finished one failed (`failed`), the
 * newest good one was not verified (`unverified`), or its off-site copy failed or is gone
 * (`offsite`). Which of these a policy acts on is its `problems` (default `stale` alone, as before
 * the others could be: a policy written then does not start acting on more). The rest of the
 * backup problems (health, size, no off-site storage at all) are not fixed by one more backup.
 *
 * The alerts about one backup (failed, unverified, off-site) name the backup as their subject and
 * the app in their details (`app_id`); the app is what is changed, so two alerts of one app share
 * one attempt (and one request) at a time.
 *
 * Once the backup's run succeeded, the backup is read back by id (`backups.get`) until it is
 * verified and its off-site copies uploaded, or `readback` passes (`backup-readback.ts`), and the
 * outcome says which.
 */
import { z } from 'zod';
import type { AlertRow } from '../../alerts/alert-store.js';
import { durationSchema } from '../../config/duration.js';
import { policySchema } from '../../config/policy-schema.js';
import type { RemediationAction } from './action.js';
import { appRunSince } from './app-run-since.js';

/** The backup problems (the `problem` label of a `backups` alert) a backup taken now can fix. */
export const BACKUP_FIXES = ['stale', 'failed', 'unverified', 'offsite'] as const;

/** An `apps.backup` policy. */
const backupPolicySchema = policySchema('apps.backup', '1h', {
  format: z.enum(['zip', 'dump']).default('zip'),
  problems: z
    .array(z.enum(BACKUP_FIXES))
    .min(1)
    .default(['stale'])
    .describe(
      'The backup problems a backup is taken for: stale (too old or none), failed, unverified, offsite (a failed or lost off-site copy). Default stale.',
    ),
  readback: durationSchema
    .prefault('30m')
    .describe(
      'After the backup run succeeded, how long the backup is read back (backups.get) for it to be verified and copied off-site before the outcome says what stands.',
    ),
});

/** The app a backups alert is about: its subject, or for an alert about one backup, `app_id` in its details. */
function appOf(alert: AlertRow): number | null {
  if (alert.subject?.type === 'app') return alert.subject.id ?? null;
  const id = Number(alert.details.app_id);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** The apps.backup action. */
export const appsBackup: RemediationAction<z.output<typeof backupPolicySchema>> = {
  name: 'apps.backup',
  policy: backupPolicySchema,
  recordType: 'app',
  target(alert: AlertRow) {
    if (alert.check !== 'backups' || !(BACKUP_FIXES as readonly string[]).includes(alert.labels.problem ?? '')) {
      return null;
    }
    const app = appOf(alert);
    return app === null ? null : { recordType: 'app', recordId: app };
  },
  covers: (alert, policy) => (policy.problems as readonly string[]).includes(alert.labels.problem ?? ''),
  body: (policy) => ({ format: policy.format }),
  send: (client, recordId, body, options) => client.apps.backup(recordId, body as { format?: 'zip' | 'dump' }, options),
  findStartedRun(client, facts, signal) {
    // The change result of the earlier request is lost; the newest backup run of the app created
    // since that request is the one it started.
    return appRunSince(client, facts, /backup/i, signal);
  },
  readBackFor: (policy) => policy.readback,
  words: {
    done: 'Backup started automatically',
    succeeded: 'Backup taken automatically',
    failed: 'Automatic backup failed',
    noun: 'Automatic backup',
    request: 'Back up now',
  },
};
