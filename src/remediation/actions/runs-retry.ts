/**
 * `runs.retry`: restarts a failed run from the step that failed. Acts on `failed_runs` alerts
 * about a run. A run the service will retry by itself (`retrying`, reference §3.1) is left alone
 * unless the policy says `now: true`; the service would answer `retry_coming` anyway.
 */
import { z } from 'zod';
import { policySchema } from '../../config/policy-schema.js';
import { failureTime } from '../../detectors/run-lineage.js';
import { subjectTarget, type RemediationAction } from './action.js';

/** A `runs.retry` policy. */
const retryPolicySchema = policySchema('runs.retry', '10m', {
  now: z.boolean().default(false).describe('Retry at once instead of waiting for the service’s own retry.'),
});

/** The runs.retry action. */
export const runsRetry: RemediationAction<z.output<typeof retryPolicySchema>> = {
  name: 'runs.retry',
  policy: retryPolicySchema,
  recordType: 'run',
  target: (alert) => subjectTarget(alert, 'failed_runs', 'run'),
  precheck(alert, policy) {
    // The run is running again (a retry restarted it, whoever sent it: the alert follows it):
    // nothing to retry, and the service would refuse (not_retryable) for the rest of the alert's life.
    if (alert.details.retry_since !== undefined) return 'run_running_again';
    // The detector writes `retrying: yes` while the service still means to retry by itself.
    if (alert.details.retrying === 'yes' && !policy.now) return 'run_retrying';
    return null;
  },
  body: (policy) => ({ now: policy.now }),
  send: (client, recordId, body, options) => client.runs.retry(recordId, body as { now?: boolean }, options),
  async findStartedRun(client, facts, signal) {
    // A retry restarts the same run: the run to verify and follow is the record itself. But a
    // reused key (§7.3) may be one whose first request failed (a 5xx) and changed nothing: the run
    // was retried only if it moved since the failure its alert told of (nothing else moves a
    // failed run's updated_at; both times are the service's).
    if (facts.toldFailedAt === undefined || facts.toldFailedAt === null) return facts.recordId;
    const run = await client.runs.get(facts.recordId, signal ? { signal } : {});
    const failedAt = failureTime(run);
    return failedAt !== null && failedAt <= facts.toldFailedAt ? null : facts.recordId;
  },
  words: {
    done: 'Retried automatically',
    succeeded: 'Retried automatically: succeeded',
    failed: 'Retried automatically: failed',
    noun: 'Automatic retry',
    request: 'Retry now',
  },
};
