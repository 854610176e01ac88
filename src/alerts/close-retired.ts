/**
 * Closing the alerts the configuration no longer looks at. A check switched off (or its job set
 * "off", or an attention rule ignored) will never produce a complete snapshot that says its
 * problems are over; left alone its alerts would stay open forever, and resolving them through the
 * lifecycle would page "resolved" for problems nobody checked. So they are closed quietly: a firing
 * alert becomes resolved with the reason in its details (`closed`) and no event, so no channel and
 * no digest hears of it; a pending one, never announced, is forgotten. If the check comes back and
 * the problem is still there, it fires again as a new alert.
 */
import type { AlertRow, AlertStore } from './alert-store.js';

/** Why an alert was closed without a word. */
export type CloseReason =
  'check disabled by configuration' | 'job switched off by configuration' | 'attention rule ignored by configuration';

/** One alert closed, and why. */
export type ClosedAlert = Pick<AlertRow, 'fingerprint' | 'check'> & { reason: CloseReason };

/**
 * Closes every open alert for which `retired` names a reason. Must run inside a transaction
 * (like `applyFindings`), so a crash half-way closes none. Answers what was closed.
 */
export function closeRetired(
  alerts: AlertStore,
  retired: (alert: AlertRow) => CloseReason | null,
  now: number,
): ClosedAlert[] {
  if (!alerts.store.db.inTransaction) throw new Error('closeRetired must run inside store.transaction(...)');
  const closed: ClosedAlert[] = [];
  for (const alert of alerts.open()) {
    const reason = retired(alert);
    if (reason === null) continue;
    if (alert.status === 'pending') alerts.drop(alert.fingerprint);
    else alerts.close(alert.fingerprint, reason, now);
    closed.push({ fingerprint: alert.fingerprint, check: alert.check, reason });
  }
  return closed;
}
