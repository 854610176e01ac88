/**
 * `runs.retry`: restarts a failed run from the step that failed. Acts on `failed_runs` alerts
 * about a run. A run the service will retry by itself (`retrying`, reference §3.1) is left alone
 * unless the policy says `now: true`; the service would answer `retry_coming` anyway.
 */
import type { AlertRow } from '../../alerts/alert-store.js';
import type { PolicyConfig } from '../../config/config-schema.js';
import type { RemediationAction } from './action.js';

type RetryPolicy = Extract<PolicyConfig, { action: 'runs.retry' }>;

/** The runs.retry action. */
export const runsRetry: RemediationAction<RetryPolicy> = {
  name: 'runs.retry',
  recordType: 'run',
  target(alert: AlertRow) {
    if (alert.check !== 'failed_runs' || alert.subject?.type !== 'run' || alert.subject.id === undefined) return null;
    return { recordType: 'run', recordId: alert.subject.id };
  },
  precheck(alert, policy) {
    // The detector writes `retrying: yes` while the service still means to retry by itself.
    if (alert.details.retrying === 'yes' && !policy.now) return 'run_retrying';
    return null;
  },
  body(policy) {
    return { now: policy.now };
  },
  send(client, recordId, body, options) {
    return client.runs.retry(recordId, body as { now?: boolean }, options);
  },
  async findStartedRun(_client, facts) {
    // A retry restarts the same run: the run to verify and follow is the record itself.
    return facts.recordId;
  },
  words: {
    done: 'Retried automatically',
    succeeded: 'Retried automatically: succeeded',
    failed: 'Retried automatically: failed',
    noun: 'Automatic retry',
  },
};
