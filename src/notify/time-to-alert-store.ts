/**
 * The `time_to_alert` table's SQL (migration 014): the first successful delivery of each firing
 * event, and the recent ones read back per check. Row ⇄ object mapping lives here and nowhere else;
 * what counts as the record's time is `time-to-alert.ts`'s.
 */
import type { Store } from '../state/store.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { SqlStatement } from '../state/sql-database.js';

/** The first delivery of one firing event: from the record's own time of its problem to then. */
export interface FirstDelivery {
  eventId: number;
  check: string;
  /** The channel that delivered it first. */
  channel: string;
  /** The record's own time of the problem (ms since the epoch). */
  recordAt: number;
  /** When it was delivered (ms since the epoch). */
  deliveredAt: number;
}

/** Time to alert of one check over a window. */
export interface TimeToAlertSummary {
  check: string;
  /** Firing notifications delivered in the window. */
  count: number;
  /** Median and 95th percentile, in seconds (nearest rank). */
  p50: number;
  p95: number;
}

/** The prepared statements of the `time_to_alert` table for one open store. */
export class TimeToAlertStore {
  readonly #insert: SqlStatement<[FirstDelivery]>;

  constructor(readonly store: Store) {
    this.#insert = store.db.prepare(
      `INSERT INTO time_to_alert (event_id, check_name, channel, record_at, delivered_at)
       VALUES (@eventId, @check, @channel, @recordAt, @deliveredAt)
       ON CONFLICT (event_id) DO NOTHING`,
    );
  }

  /**
   * Records each delivery unless its event was delivered before (by another channel, or a message
   * sent again after a crash); answers the ones that were the first. Inside the transaction that
   * marks the rows sent.
   */
  recordFirst(deliveries: readonly FirstDelivery[]): FirstDelivery[] {
    return deliveries.filter((d) => this.#insert.run(d).changes > 0);
  }
}

/**
 * Per check, the time to alert of the firing notifications first delivered at or after `since`
 * (ms since the epoch), most frequent check first: what the console's sources page shows.
 */
export function timeToAlertSummary(store: Store, since: number): TimeToAlertSummary[] {
  const rows = store.db
    .prepare<[number], { check_name: string; ms: number }>(
      `SELECT check_name, delivered_at - record_at AS ms FROM time_to_alert
       WHERE delivered_at >= ? ORDER BY check_name, ms`,
    )
    .all(since);
  const byCheck = new Map<string, number[]>();
  for (const r of rows) {
    getOrAdd(byCheck, r.check_name, () => []).push(Math.max(0, Number(r.ms)) / 1000);
  }
  return [...byCheck]
    .map(([check, sorted]) => ({
      check,
      count: sorted.length,
      p50: nearestRank(sorted, 0.5),
      p95: nearestRank(sorted, 0.95),
    }))
    .sort((a, b) => b.count - a.count || a.check.localeCompare(b.check));
}

/** The nearest-rank percentile `p` (0..1] of ascending `sorted` values. */
function nearestRank(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}
