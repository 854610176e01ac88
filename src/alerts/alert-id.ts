/**
 * An alert's short id: the first eight hex digits of its fingerprint's SHA-256. Typeable where a
 * fingerprint is long (`attention/…/url/id/5`), the same in every listing and every process, and
 * stored nowhere: it is worked out from the fingerprint, so it never needs a migration or a lookup
 * table. Two alerts may share one (a 1-in-4-billion chance per pair): then the id is refused as
 * ambiguous and the fingerprint does it.
 */
import { createHash } from 'node:crypto';
import type { Store } from '../state/store.js';
import { alertStoreOf, type AlertRow, type AlertStore } from './alert-store.js';

/** Hex digits of an id. */
const ID_LENGTH = 8;

/** The alert's short id. */
export function alertId(fingerprint: string): string {
  return createHash('sha256').update(fingerprint).digest('hex').slice(0, ID_LENGTH);
}

/** What a fingerprint or short id names. */
export type FoundAlert =
  | { outcome: 'found'; alert: AlertRow }
  /** A short id several alerts have: their fingerprints, to give one of instead. */
  | { outcome: 'ambiguous'; fingerprints: string[] }
  | { outcome: 'not_found' };

/**
 * The alert a person named, by fingerprint (exactly), else by short id (any case), among every
 * alert the state file holds (resolved ones too, so a late command can say it is over).
 */
export function findAlert(store: Store | AlertStore, ref: string): FoundAlert {
  const alerts = alertStoreOf(store);
  const text = ref.trim();
  const exact = alerts.get(text);
  if (exact) return { outcome: 'found', alert: exact };
  const id = text.toLowerCase();
  if (!new RegExp(`^[0-9a-f]{${ID_LENGTH}}$`).test(id)) return { outcome: 'not_found' };
  // Read when a person asks, not per cycle: a pass over the fingerprints is cheap enough for that.
  const fingerprints = alerts.fingerprintsWhere((fp) => alertId(fp) === id);
  if (fingerprints.length > 1) return { outcome: 'ambiguous', fingerprints };
  const alert = fingerprints[0] === undefined ? undefined : alerts.get(fingerprints[0]);
  return alert ? { outcome: 'found', alert } : { outcome: 'not_found' };
}
