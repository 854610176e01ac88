/**
 * The key the alert lifecycle decides alerts by: whose snapshot says which of its alerts are still
 * there. A leaf, so the lifecycle and the cycle's sink both name it without importing each other.
 */
import type { SnapshotJob } from '../collectors/snapshot.js';

/**
 * Whose snapshot decides an alert: a job's own (`runs`), a job's source alerts (`source:runs`:
 * "cannot read", "disabled"), or remediation's suspended policies.
 */
export type JobKey = SnapshotJob | SourceJobKey | RecordsJobKey | 'remediation';

/** The lifecycle job key of a job's own source alerts. */
export type SourceJobKey = `source:${SnapshotJob}`;

/** The lifecycle job key of `job`'s source alerts. */
export function sourceJobKey(job: SnapshotJob): SourceJobKey {
  return `source:${job}`;
}

/**
 * The lifecycle job key of the alerts about the records `job`'s reads set aside ("3 runs cannot be
 * read now"): decided by the job's complete reads only, so a failed read leaves them as they are.
 */
export type RecordsJobKey = `records:${SnapshotJob}`;

/** The lifecycle job key of `job`'s set-aside records alerts. */
export function recordsJobKey(job: SnapshotJob): RecordsJobKey {
  return `records:${job}`;
}
