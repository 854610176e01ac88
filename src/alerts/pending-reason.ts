/**
 * Why a pending alert is not told yet, in words: the cycles `alerts.for` still asks for, the hold
 * its check asked for (until when, and what it waits for; or, with no end time, what its record is
 * going through: a retry under way), or neither any more (it fires at its job's next cycle). `deploy-watchdog alerts` and the console say the same.
 */
import { formatUtc } from '../lib/format-utc.js';
import type { AlertRow } from './alert-store.js';

/** The reasons a pending alert waits, each as a person reads it; empty for an alert not pending. */
export function pendingReason(
  alert: Pick<AlertRow, 'status' | 'seenCount' | 'hold'>,
  forCycles: number,
  now: number,
): string[] {
  if (alert.status !== 'pending') return [];
  const out: string[] = [];
  if (alert.seenCount < forCycles) out.push(`seen ${alert.seenCount} of ${forCycles} cycles (alerts.for)`);
  const hold = alert.hold;
  if (hold && hold.until === null && hold.reason !== null) out.push(`held: ${hold.reason}`);
  else if (hold && hold.until !== null && hold.until > now) {
    out.push(`held until ${formatUtc(hold.until)}: ${hold.reason ?? "its check's wait"}`);
  }
  if (out.length === 0) out.push("nothing holds it any more: it fires at its job's next cycle");
  return out;
}
