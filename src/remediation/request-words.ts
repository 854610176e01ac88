/**
 * What a person who asked for a remediation (a button in Slack or the console) is told when the
 * policy did not act: one sentence per named reason, the same on every surface.
 */
import { notFiringText } from '../alerts/acknowledge.js';
import { formatUtc } from '../lib/format-utc.js';
import type { SkipReason } from './policy.js';
import type { RemediationRequest } from './remediator.js';

/** Said when no remediation policy is configured: there is nothing to ask. */
export const NO_POLICY_TEXT = 'No remediation policy is configured: nothing was sent.';

/** What a person who asked for a remediation is told when nothing was sent, whatever the reason. */
export function unsentText(r: Exclude<RemediationRequest, { outcome: 'planned' }>): string {
  switch (r.outcome) {
    case 'dry_run':
      return `Policy ${r.policy} is in dry run: nothing was sent (it would send idempotency key ${r.key}).`;
    case 'skipped':
      return `${skipText(r.reason, r.policy, r.nextAllowedAt)}: nothing was sent.`;
    case 'not_covered':
      return 'No remediation policy acts on this alert now: nothing was sent.';
    case 'not_firing':
      return notFiringText(r.alert, 'act on');
    case 'not_found':
      return 'There is no such alert any more: nothing was sent.';
  }
}

/** Why a policy asked to act did not, in a sentence without its end. */
export function skipText(reason: SkipReason, policy: string, nextAllowedAt: number | null): string {
  switch (reason) {
    case 'attempt_in_progress':
      return 'An attempt is already under way (its outcome will be said in the thread)';
    case 'max_attempts_reached':
      return `Policy ${policy} has used its attempts on this record (max_attempts)`;
    case 'backoff_pending':
      return `Policy ${policy} waits${nextAllowedAt === null ? '' : ` until ${formatUtc(nextAllowedAt)}`} before another attempt (backoff)`;
    case 'stopped':
      return 'The service said this record cannot be changed that way';
    case 'disabled':
      return 'Remediation is off (remediation.enabled: false)';
    case 'policy_suspended':
    case 'environment_paused':
      return `Policy ${policy} is suspended after a refusal only a person can fix (see its watchdog alert)`;
    case 'production_not_named':
      return `Policy ${policy} does not name production`;
    case 'not_automatic':
      return `Policy ${policy} acts only when asked`;
    case 'silenced':
      return 'A silence holds the automatic moves on this alert (remediation.during_silence: hold)';
    case 'hourly_limit':
      return 'The hourly limit of remediation actions is reached (remediation.max_actions_per_hour); try later';
    case 'run_retrying':
      return `The service will retry this run by itself, and policy ${policy} waits for that (now: false)`;
    case 'run_running_again':
      return 'The run is running again (a retry is under way): its outcome will be said in this alert';
  }
}
