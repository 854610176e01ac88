/**
 * The idempotency key of one attempt, derived from what the attempt is, never random: the policy,
 * the record and the attempt number. Written to SQLite before the request is sent, so after a
 * crash the same attempt is re-sent with the same key and the service can only ever apply it once.
 * Two watchdogs with the same policy name acting on the same record also derive the same key, so
 * even a duplicated deployment cannot make the change twice.
 */
import { createHash } from 'node:crypto';
import type { RecordType } from './actions/action.js';

/**
 * Keys stay short and plain (letters, digits, `.`, `_`, `-`; at most 64 characters): the reference
 * does not state a limit, and this fits what idempotency-key implementations commonly accept.
 */
export const MAX_KEY_LENGTH = 64;
const POLICY_PART_MAX = 32;

/** `dw-<policy>-<record type><id>-a<attempt>`, e.g. `dw-retry-staging-run123-a1`. */
export function idempotencyKey(policy: string, recordType: RecordType, recordId: number, attempt: number): string {
  if (!Number.isSafeInteger(recordId) || recordId < 1) throw new RangeError(`record id must be a positive integer, got ${recordId}`);
  if (!Number.isSafeInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const key = `dw-${policyPart(policy)}-${recordType}${recordId}-a${attempt}`;
  if (key.length > MAX_KEY_LENGTH) throw new RangeError(`idempotency key ${key} is longer than ${MAX_KEY_LENGTH}`);
  return key;
}

/**
 * The policy name as it may appear in a key: itself when short and plain, else a readable prefix
 * and a hash of the whole name, so two long names never share a key.
 */
function policyPart(policy: string): string {
  const plain = policy.replace(/[^A-Za-z0-9._-]/g, '_');
  if (plain === policy && policy.length <= POLICY_PART_MAX) return policy;
  const hash = createHash('sha256').update(policy).digest('hex').slice(0, 8);
  return `${plain.slice(0, POLICY_PART_MAX - 9)}~${hash}`.replace('~', '-');
}
