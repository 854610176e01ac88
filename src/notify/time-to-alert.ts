/**
 * Time to alert, the headline figure: from the record's own time of a problem to the first
 * successful delivery of its firing notification, on whichever channel was first. Observed in
 * `deploy_watchdog_time_to_alert_seconds{check}` and kept in the state (`time_to_alert`), so the
 * console shows it per check whichever replica serves it, and a restart loses none.
 *
 * The record's time is what the finding carries: its `since` where the check gives one (a failed
 * run's `updated_at`; a stuck run's start; a backup's staleness; a certificate's expiry), else the
 * URL's `public_checked_at` (url_checks' `checked_at`: the check that failed), else the app's
 * `updated_at` (app_state). A finding with none of them (a server's state) is not measured.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { parseTime } from '../lib/parse-time.js';
import type { Metrics } from '../lib/metrics.js';
import type { OutboxRow } from './outbox-store.js';
import type { FirstDelivery, TimeToAlertStore } from './time-to-alert-store.js';

/** The record's own time of the problem an event is about (ms since the epoch), or null when it gives none. */
export function recordTimeOf(event: Pick<AlertEvent, 'since' | 'details'>): number | null {
  return parseTime(event.since ?? event.details.checked_at ?? event.details.updated_at ?? null);
}

/** Records and observes the first delivery of each firing event. */
export class TimeToAlert {
  constructor(
    private readonly store: TimeToAlertStore,
    private readonly metrics?: Pick<Metrics, 'timeToAlert'>,
  ) {}

  /**
   * The firing events among `rows`, delivered by `channel` at `at`, that were told for the first
   * time: recorded, inside the transaction that marks the rows sent. Hand the answer to
   * {@link observe} once that transaction has committed.
   */
  record(rows: readonly OutboxRow[], channel: string, at: number): FirstDelivery[] {
    const deliveries: FirstDelivery[] = [];
    for (const row of rows) {
      if (row.source !== 'event' || row.kind !== 'firing' || row.eventId === null) continue;
      const event = JSON.parse(row.payload) as AlertEvent;
      const recordAt = recordTimeOf(event);
      if (recordAt === null) continue;
      deliveries.push({ eventId: row.eventId, check: event.check, channel, recordAt, deliveredAt: at });
    }
    return deliveries.length === 0 ? [] : this.store.recordFirst(deliveries);
  }

  /** Observes recorded first deliveries in the histogram (a record's time ahead of ours counts as 0). */
  observe(deliveries: readonly FirstDelivery[]): void {
    for (const d of deliveries) {
      this.metrics?.timeToAlert.observe({ check: d.check }, Math.max(0, d.deliveredAt - d.recordAt) / 1000);
    }
  }
}
