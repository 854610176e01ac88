/**
 * The open alerts as a person reads them, the same in `deploy-watchdog alerts` and the console:
 * worst first, then the oldest, each with since when it has been open and the silence (if any)
 * that mutes its notifications now.
 */
import { SEVERITY_RANK } from '../lib/alert-vocabulary.js';
import type { Store } from '../state/store.js';
import { alertStoreOf, type AlertRow } from './alert-store.js';
import { activeSilenceFor, listSilences, type Silence } from './silences.js';

/** One open alert with what is said beside it. */
export interface OpenAlertView {
  alert: AlertRow;
  /** Since when it has been firing, or seen while still pending (ms). */
  since: number;
  /** The silence in force that mutes it now, if one does. */
  silence: Silence | undefined;
}

/** The pending and firing alerts at `now`, worst severity first, then oldest, with their silence. */
export function openAlertsView(store: Store, now: number): OpenAlertView[] {
  const silences = listSilences(store, { now });
  return alertStoreOf(store)
    .open()
    .map((alert) => ({ alert, since: sinceOf(alert), silence: activeSilenceFor(silences, alert.labels, now) }))
    .sort((a, b) => SEVERITY_RANK[b.alert.severity] - SEVERITY_RANK[a.alert.severity] || a.since - b.since);
}

/** Since when the alert has been firing, or seen when still pending. */
export function sinceOf(a: AlertRow): number {
  return a.firedAt ?? a.firstSeenAt;
}
