/**
 * `apps.backup`: takes a backup of an app whose newest backup is too old or missing. Acts on
 * `backups` alerts of the `stale` sub-problem about an app (the other backup problems, health,
 * verification and off-site copies, are not fixed by one more backup).
 */
import { parseTime } from '../../lib/parse-time.js';
import { z } from 'zod';
import type { AlertRow } from '../../alerts/alert-store.js';
import { policySchema } from '../../config/policy-schema.js';
import type { RemediationAction } from './action.js';

/** An `apps.backup` policy. */
const backupPolicySchema = policySchema('apps.backup', '1h', {
  format: z.enum(['zip', 'dump']).default('zip'),
});

type BackupPolicy = z.output<typeof backupPolicySchema>;

/**
 * How far before our first send a run may have been created and still be the one it started:
 * the service's clock and ours differ a little.
 */
const CLOCK_SLACK_MS = 2 * 60_000;

/** The apps.backup action. */
export const appsBackup: RemediationAction<BackupPolicy> = {
  name: 'apps.backup',
  policy: backupPolicySchema,
  recordType: 'app',
  target(alert: AlertRow) {
    if (alert.check !== 'backups' || alert.labels.problem !== 'stale') return null;
    if (alert.subject?.type !== 'app' || alert.subject.id === undefined) return null;
    return { recordType: 'app', recordId: alert.subject.id };
  },
  precheck() {
    return null;
  },
  body(policy) {
    return { format: policy.format };
  },
  send(client, recordId, body, options) {
    return client.apps.backup(recordId, body as { format?: 'zip' | 'dump' }, options);
  },
  async findStartedRun(client, facts, signal) {
    // The change result of the earlier request is lost; the newest backup run of the app created
    // since that request is the one it started. The reference leaves action words open, so "a
    // backup run" is one whose action or workflow mentions backup.
    const since = (facts.firstSentAt ?? facts.plannedAt) - CLOCK_SLACK_MS;
    const page = await client.runs.list({ app_id: facts.recordId, limit: 20 }, signal ? { signal } : {});
    const run = page.items.find((r) => {
      const created = parseTime(r.created_at) ?? NaN;
      return /backup/i.test(`${r.action} ${r.workflow}`) && !(created < since);
    });
    return run?.id ?? null;
  },
  words: {
    done: 'Backup started automatically',
    succeeded: 'Backup taken automatically',
    failed: 'Automatic backup failed',
    noun: 'Automatic backup',
    request: 'Back up now',
  },
};
