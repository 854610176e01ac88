/**
 * What a cycle says about the records its read set aside (`api/quarantine.ts`), beside the alert
 * (`alerts/skipped-records.ts`): the count in `deploy_watchdog_records_skipped_total{source,reason}`,
 * and, for a value beyond those the reference states, one warning per value while a configuration
 * runs, as for an unknown state word (`unknown-state-words.ts`).
 */
import type { QuarantinedRecord } from '../api/quarantine.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import { getOrAdd } from '../lib/get-or-add.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../lib/metrics.js';
import type { WarnedOnce } from './warned-once.js';

/**
 * Counts the set-aside records by reason, and warns once per value beyond the stated ones; `warned`
 * holds the warnings already given under this configuration (shared with the state words; groups
 * `value:…`).
 */
export function reportSkippedRecords(
  deps: { metrics: Metrics; warned: WarnedOnce },
  job: SnapshotJob,
  log: Logger,
  records: readonly QuarantinedRecord[],
): void {
  const byReason = new Map<string, number>();
  for (const record of records) byReason.set(record.reason, (byReason.get(record.reason) ?? 0) + 1);
  for (const [reason, n] of byReason) deps.metrics.recordsSkipped.inc({ source: job, reason }, n);
  const values = new Map<string, { record: QuarantinedRecord; count: number }>();
  for (const record of records) {
    if (record.reason !== 'unknown_value') continue;
    const key = `value:${record.fn}:${record.field}:${record.value}`;
    getOrAdd(values, key, () => ({ record, count: 0 })).count++;
  }
  for (const { record, count } of values.values()) {
    const said = deps.warned.take(`value:${record.fn}:${record.field}`, record.value!);
    if (said === 'quiet') continue;
    log.warn(
      { fn: record.fn, field: record.field, value: record.value, count },
      `${record.fn} reports ${record.field} ${JSON.stringify(record.value)} (${count} ${record.kind}${count === 1 ? '' : 's'}, e.g. id ${record.id ?? 'unreadable'}), ` +
        'which is not one of the values the reference states (§3), so no check can judge it. ' +
        'The record is set aside and its alerts held (a watchdog alert names it) until the service says a stated value again' +
        (record.configKey ? `, or ${record.configKey} says which stated value it means` : '') +
        (said === 'last'
          ? `. No more values of ${record.field} from ${record.fn} are warned of while this configuration runs ` +
            '(deploy_watchdog_records_skipped_total counts them, the watchdog alert names them)'
          : ''),
    );
  }
  if (records.length > 0)
    log.debug(
      { skipped: records.map((r) => ({ kind: r.kind, id: r.id, reason: r.reason, detail: r.detail })) },
      'records set aside',
    );
}
