/**
 * What remediation did, worded for the daily digest (`src/notify/digest.ts`): the runtime hands
 * it to the notifier, so notify never reads remediation's table and remediation words its own rows.
 */
import type { Store } from '../state/store.js';
import { auditSince, type AuditDecision, type AuditRow } from './remediation-store.js';

/** Audit decisions that say what remediation did; skips and answers are left out (they are most rows). */
const DONE_DECISIONS: readonly AuditDecision[] = ['acted', 'dry_run', 'outcome', 'suspended'];

/** What remediation did after `since`, a line each, oldest first. */
export function remediationDigest(store: Store, since: number): string[] {
  return auditSince(store, since, DONE_DECISIONS).map(auditLine);
}

/** "retry-nonprod runs.retry run #42: succeeded (reason)". */
function auditLine(r: AuditRow): string {
  const record = r.recordType === null ? '' : ` ${r.recordType} #${r.recordId ?? '?'}`;
  return `${r.policy} ${r.action}${record}: ${r.outcome ?? r.decision}${r.reason ? ` (${r.reason})` : ''}`;
}
