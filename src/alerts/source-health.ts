/**
 * The watchdog's own findings about whether each job can read its source (its row in
 * `source-health-store.ts`): "cannot read runs: …" after `checks.sources.failure_threshold`
 * consecutive failed cycles, and "runs check disabled: the token lacks …" when a permission is
 * missing. Both are applied through the alert lifecycle under the job key `source:<job>`, so they
 * fire, repeat and resolve like any other alert, and survive restarts the same way.
 */
import type { Finding } from '../detectors/finding.js';
import { presented } from '../detectors/registry.js';
import type { PermissionDenial } from '../api/describe-error.js';
import type { SourceHealthRow } from './source-health-store.js';

/** "cannot read runs: …", once a job has failed `threshold` cycles in a row. */
export function cannotReadFinding(job: string, row: SourceHealthRow): Finding {
  const reason = row.lastError ?? 'unknown error';
  return presented({
    fingerprint: `watchdog/source/${job}`,
    check: 'watchdog',
    severity: 'critical',
    summary: `cannot read ${job}: ${reason}`,
    details: {
      job,
      error: reason,
      failed_cycles: String(row.consecutiveFailures),
      last_success: row.lastSuccessAt === null ? 'never' : new Date(row.lastSuccessAt).toISOString(),
    },
    // `source` marks it as an "API unreadable" cause for notify's inhibition.
    labels: { check: 'watchdog', source: job },
    subject: { type: 'source' },
  });
}

/**
 * "runs check disabled: the token lacks deployment_workflow: read", once, when a permission is
 * missing. No `source` label: a missing permission is not an outage and must not hold other alerts.
 */
export function checkDisabledFinding(job: string, denial: PermissionDenial): Finding {
  return presented({
    fingerprint: `watchdog/disabled/${job}`,
    check: 'watchdog',
    severity: 'warning',
    summary: `${job} check disabled: the token lacks ${denial.permission}`,
    details: {
      job,
      permission: denial.permission,
      refused: `${denial.fn} answered ${denial.code}`,
      until: 'the token is given the permission and the watchdog restarted or reloaded (SIGHUP)',
    },
    labels: { check: 'watchdog', job },
    subject: { type: 'source' },
  });
}
