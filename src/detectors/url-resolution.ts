/**
 * Why an alert about a URL record is over, for the checks of the urls job (certificates,
 * url_checks): the record it names, read in the snapshot that resolved it, said by `say`.
 */
import type { UrlRecord } from '../api/schemas.js';
import type { UrlsSnapshot } from '../collectors/snapshot.js';
import type { ResolvedAlert } from './define-check.js';

/** `say(record)` of the alert's URL; "gone" when the snapshot no longer has it; null when it names none. */
export function urlResolution(
  alert: ResolvedAlert,
  snapshot: UrlsSnapshot,
  say: (record: UrlRecord) => string,
): string | null {
  const id = alert.subject?.type === 'url' ? alert.subject.id : undefined;
  if (id === undefined) return null;
  const record = snapshot.urls.find((u) => u.id === id);
  return record ? say(record) : 'the URL is gone from the service';
}
