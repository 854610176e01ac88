import { parseTime } from './parse-time.js';

/** A record the API lists newest first: an id that grows, and its times. */
export interface TimedRecord {
  id: number;
  created_at: string | null;
  updated_at: string | null;
}

/** The time a record is ordered by: its creation, else its last update; -Infinity (last) with neither. */
function orderTime(record: TimedRecord): number {
  return parseTime(record.created_at) ?? parseTime(record.updated_at) ?? -Infinity;
}

/** Where a record stands in the {@link newestFirst} order. */
export interface OrderKey {
  time: number;
  id: number;
}

/** A record's place in the {@link newestFirst} order, for keeping where a record stood without the record. */
export function orderKey(record: TimedRecord): OrderKey {
  return { time: orderTime(record), id: record.id };
}

/** Whether `a` comes before `b` newest first. */
export function isNewer(a: OrderKey, b: OrderKey): boolean {
  return compare(a.time, a.id, b.time, b.id) < 0;
}

function compare(ta: number, idA: number, tb: number, idB: number): number {
  if (ta !== tb) return tb > ta ? 1 : -1;
  return idB - idA;
}

/**
 * Orders records newest first: by creation time (else last update), then by id, since ids grow;
 * a record with neither time sorts last. The order does not depend on the list's, so records
 * merged from several lists (namespaces, an app's own runs) read the same way everywhere.
 */
export function newestFirst(a: TimedRecord, b: TimedRecord): number {
  return compare(orderTime(a), a.id, orderTime(b), b.id);
}

/**
 * Sorts `records` in place in the {@link newestFirst} order, reading each record's time once
 * rather than twice per comparison (a runs snapshot of 24,000 runs took ~700,000 `Date.parse`s).
 */
export function sortNewestFirst<T extends TimedRecord>(records: T[]): T[] {
  const keyed = records.map((record) => ({ record, time: orderTime(record) }));
  keyed.sort((a, b) => compare(a.time, a.record.id, b.time, b.record.id));
  for (let i = 0; i < keyed.length; i++) records[i] = keyed[i]!.record;
  return records;
}
