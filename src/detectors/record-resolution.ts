/**
 * Why an alert about one record is over, read in the snapshot that resolved it: the record its
 * subject names, found among the snapshot's records of that kind, and said by its check (`say`).
 * Every check whose alerts are about one app, server, service or URL answers through it.
 */
import type { Subject } from '../lib/alert-vocabulary.js';
import type { ResolvedAlert } from './define-check.js';

/** What is said of each kind of record the snapshot no longer has. */
const GONE = {
  app: 'the app is gone from the service',
  server: 'the server is gone from the service',
  url: 'the URL is gone from the service',
  installer: 'the service is gone from the platform',
} as const satisfies Partial<Record<Subject['type'], string>>;

/**
 * `say(record)` of the record the alert's subject names; that it is gone ({@link GONE}) when the
 * snapshot no longer has it; null when the alert names no record of `type`.
 */
export function recordResolution<R extends { id: number }>(
  alert: ResolvedAlert,
  type: keyof typeof GONE,
  records: readonly R[],
  say: (record: R) => string | null,
): string | null {
  const id = alert.subject?.type === type ? alert.subject.id : undefined;
  if (id === undefined) return null;
  const record = records.find((r) => r.id === id);
  return record ? say(record) : GONE[type];
}
