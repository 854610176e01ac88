import { parseTime } from './parse-time.js';

/** A record the API lists newest first: an id that grows, and its times. */
export interface TimedRecord {
  id: number;
  created_at: string | null;
  updated_at: string | null;
}

/** Where a record stands in the {@link sortNewestFirst} order. */
export interface OrderKey {
  time: number;
  id: number;
}

/**
 * A record's place in the {@link sortNewestFirst} order, for keeping where a record stood without the
 * record: its creation time, else its last update; -Infinity (last) with neither.
 */
export function orderKey(record: TimedRecord): OrderKey {
  return { time: parseTime(record.created_at) ?? parseTime(record.updated_at) ?? -Infinity, id: record.id };
}

/** Whether `a` comes before `b` newest first. */
export function isNewer(a: OrderKey, b: OrderKey): boolean {
  return compare(a, b) < 0;
}

function compare(a: OrderKey, b: OrderKey): number {
  if (a.time !== b.time) return b.time > a.time ? 1 : -1;
  return b.id - a.id;
}

/**
 * Sorts `records` in place newest first: by creation time (else last update), then by id, since
 * ids grow; a record with neither time sorts last. The order does not depend on the list's, so
 * records merged from several lists (namespaces, an app's own runs) read the same way everywhere.
 * Each record's time is read once rather than twice per comparison (a runs snapshot of 24,000
 * runs took ~700,000 `Date.parse`s).
 */
export function sortNewestFirst<T extends TimedRecord>(records: T[]): T[] {
  const keyed = records.map((record) => ({ record, ...orderKey(record) }));
  keyed.sort(compare);
  for (let i = 0; i < keyed.length; i++) records[i] = keyed[i]!.record;
  return records;
}
