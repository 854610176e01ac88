/**
 * Stable fingerprints. A fingerprint names one problem for as long as it lasts: the lifecycle
 * matches today's findings to yesterday's alerts by it, so it is built only from identities (check,
 * record type, record id, sub-problem), never from anything that changes while the problem lasts
 * (severity, counts, times, messages).
 */
import { createHash } from 'node:crypto';

/** One part of a fingerprint: a name or an id. */
export type FingerprintPart = string | number;

/**
 * Joins parts with `/`: `fingerprint('failed_runs', 'run', 123)` → `failed_runs/run/123`.
 * A `/` inside a part is escaped (`%2F`), as is `%` itself, so distinct part lists never collide
 * (`a/b` + `c` is not `a` + `b/c`).
 */
export function fingerprint(...parts: FingerprintPart[]): string {
  return parts.map((p) => String(p).replace(/%/g, '%25').replace(/\//g, '%2F')).join('/');
}

/**
 * JSON with object keys sorted at every depth, so two objects with the same content serialise the
 * same whatever order their keys came in. `undefined` members are dropped, as JSON does.
 */
export function stableJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * A short stable hash of a value's content (sha256 of its sorted-key JSON, first 16 hex digits):
 * the identity of a record that carries no id of its own.
 */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(stableJson(value)).digest('hex').slice(0, 16);
}
