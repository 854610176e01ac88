/**
 * Why an open alert is, or is not, being told to anyone, in the notify stage's own words: who has
 * acknowledged it (its repeats stop), the silence that mutes it now, the cause that inhibits it now (the same `Inhibitor` the delivery
 * round asks), why a pending alert waits (its cycles, its check's hold), and what was last decided for it on each channel
 * (the outbox row's named decision and its detail: `silenced`, `muted_window`, `inhibited`,
 * `repeat_not_due`, sent…). Nothing here decides anything: it reads what the stages decide.
 */
import type { Acknowledgement } from '../alerts/alert-store.js';
import type { OpenAlertView } from '../alerts/open-alerts-view.js';
import type { Silence } from '../alerts/silences.js';
import type { Config } from '../config/load-config.js';
import { pendingReason } from '../alerts/pending-reason.js';
import { Inhibitor, type InhibitionCause } from '../notify/inhibition.js';
import { latestDecisions, type OutboxRow } from '../notify/outbox-store.js';
import type { Store } from '../state/store.js';

/** What is said about one open alert's notifications. */
export interface DeliveryState {
  /** Who has it: its repeats stop until it resolves or escalates. */
  acknowledgement: Acknowledgement | null;
  /** The silence in force that matches it. */
  silence: Silence | undefined;
  /** The firing alert that holds it back now, and by which rule. */
  inhibitedBy: InhibitionCause | undefined;
  /**
   * For a pending alert: why it waits ({@link pendingReason}: the cycles of `alerts.for`, the hold
   * its check asked for, or nothing any more).
   */
  pending: string[] | undefined;
  /** The newest decision per channel (the outbox), channel order. */
  channels: OutboxRow[];
}

/**
 * The delivery state of each alert of `open` (one read of the open alerts), from one read of the
 * latest decisions.
 */
export function deliveryStates(store: Store, config: Config, open: readonly OpenAlertView[], now: number) {
  const inhibitor = new Inhibitor(
    config.notify.inhibit,
    open.map((v) => v.alert),
  );
  const decisions = latestDecisions(store);
  return ({ alert, silence }: OpenAlertView): DeliveryState => ({
    acknowledgement: alert.acknowledgement,
    silence,
    inhibitedBy: alert.status === 'resolved' ? undefined : inhibitor.causeFor(alert),
    pending: alert.status === 'pending' ? pendingReason(alert, config.alerts.for, now) : undefined,
    channels: decisions.get(alert.fingerprint) ?? [],
  });
}

/** The outbox row's decision as a person reads it: "sent", "held: silenced (silence 1a2b…)". */
export function decisionText(row: OutboxRow): string {
  const detail = row.detail ? ` (${row.detail})` : '';
  switch (row.status) {
    case 'sent':
      return `${row.kind} sent`;
    case 'pending':
      return row.attempts > 0
        ? `${row.kind} waiting to be sent: ${row.attempts} failed attempts${row.lastError ? `, last: ${row.lastError}` : ''}`
        : `${row.kind} waiting to be sent`;
    case 'held':
      return `${row.kind} held: ${row.decision}${detail}`;
    case 'suppressed':
      return `${row.kind} not sent: ${row.decision}${detail}`;
    case 'expired':
      return `${row.kind} given up after ${row.attempts} attempts${row.lastError ? `: ${row.lastError}` : ''}`;
  }
}
