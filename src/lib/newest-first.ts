import { parseTime } from './parse-time.js';

/** A record the API lists newest first: an id that grows, and its times. */
export interface TimedRecord {
  id: number;
  created_at: string | null;
  updated_at: string | null;
}

/**
 * Orders records newest first: by creation time (else last update), then by id, since ids grow;
 * a record with neither time sorts last. The order does not depend on the list's, so records
 * merged from several lists (namespaces, an app's own runs) read the same way everywhere.
 */
export function newestFirst(a: TimedRecord, b: TimedRecord): number {
  const ta = parseTime(a.created_at) ?? parseTime(a.updated_at) ?? -Infinity;
  const tb = parseTime(b.created_at) ?? parseTime(b.updated_at) ?? -Infinity;
  if (ta !== tb) return tb > ta ? 1 : -1;
  return b.id - a.id;
}
