/**
 * The suspended policies as alerts: the `remediation` job's complete snapshot, written through
 * the cycle sink (`commitFindings`) with the notifier as its stage. One watchdog alert per
 * suspension fires once, repeats like any alert, and resolves when the suspension is lifted.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import type { AlertStore } from '../alerts/alert-store.js';
import { commitFindings } from '../alerts/commit-findings.js';
import type { Logger } from '../lib/logger.js';
import type { Notifier } from '../notify/notifier.js';
import { suspensionFinding } from './outcome-notice.js';
import type { RemediationStore } from './remediation-store.js';

/** The job name under which suspension alerts live in the alert lifecycle. */
export const REMEDIATION_JOB = 'remediation' as const;

/** Writes the suspensions now in the store as the `remediation` job's snapshot; returns the events. */
export function commitSuspensionAlerts(
  rs: RemediationStore,
  alerts: AlertStore,
  notifier: Pick<Notifier, 'take' | 'lifecycleRepeatIntervalMs'>,
  logger: Logger,
  now: number,
): AlertEvent[] {
  const findings = rs.suspensions().map(suspensionFinding);
  const options = { forCycles: 1, repeatIntervalMs: notifier.lifecycleRepeatIntervalMs, logger };
  const write = () => [{ job: REMEDIATION_JOB, findings, options }];
  return commitFindings(alerts, { job: REMEDIATION_JOB, now, write }, [notifier]);
}
