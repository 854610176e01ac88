/**
 * The idempotency key of one attempt: `dw-<installation>.<number>-<policy>-<run|app><id>-a<attempt>`,
 * e.g. `dw-3f9a0c12de.17-retry-nonprod-run123-a1`.
 *
 * - `<installation>.<number>` makes the key unique: the installation id is drawn once per state
 *   file (`meta.installation_id`, migration 005) and the number is the state's key counter, which
 *   never gives a number out twice (not even after retention pruned the attempts that used it). A
 *   new or lost state file therefore never sends a key an earlier one sent, which the service would
 *   refuse as reused or, worse, answer with the old request's answer.
 * - The rest only says what the key is for, to a person reading the service's logs; the policy
 *   name is cut short when the key would be too long.
 *
 * Nothing in it is drawn at send time: the key is written to SQLite with its attempt before the
 * request is sent, and every send of that attempt (after a crash too) uses the STORED key. Two
 * installations acting on the same record use different keys; the service's own refusals
 * (`in_progress`, `not_retryable`) are what keeps them from changing it twice.
 */
import type { ActionTarget } from './actions/action.js';

/**
 * Keys stay short and plain (letters, digits, `.`, `_`, `-`; at most 64 characters): the reference
 * does not state a limit, and this fits what idempotency-key implementations commonly accept.
 */
export const MAX_KEY_LENGTH = 64;

/** What `meta.installation_id` must look like (migration 005 writes ten hex digits). */
export const INSTALLATION_ID = /^[0-9a-z]{8,16}$/;

/** What one key is made of. */
export interface KeyParts extends ActionTarget {
  /** `meta.installation_id`. */
  installation: string;
  /** The state's key number (1, 2, …), never given out twice in one state file. */
  number: number;
  policy: string;
  /** The policy's attempt on the record (1, 2, …), as the audit and notices count it. */
  attempt: number;
}

/** The key of one attempt; throws RangeError for parts that cannot make a valid key. */
export function idempotencyKey(parts: KeyParts): string {
  const { installation, number, policy, recordType, recordId, attempt } = parts;
  if (!INSTALLATION_ID.test(installation))
    throw new RangeError(
      `installation id must be 8-16 lowercase letters or digits, got ${JSON.stringify(installation)}`,
    );
  for (const [name, value] of [
    ['key number', number],
    ['record id', recordId],
    ['attempt', attempt],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  const head = `dw-${installation}.${number}-`;
  const tail = `-${recordType}${recordId}-a${attempt}`;
  const room = MAX_KEY_LENGTH - head.length - tail.length;
  // The unique part is the head: the policy may be cut to any length, but not to nothing.
  if (room < 1) throw new RangeError(`idempotency key ${head}…${tail} would be longer than ${MAX_KEY_LENGTH}`);
  return `${head}${policyPart(policy, room)}${tail}`;
}

/** The policy name as it may appear in a key: plain characters, cut to `room`, no separator at the end. */
function policyPart(policy: string, room: number): string {
  const plain = policy.replace(/[^A-Za-z0-9._-]/g, '_');
  if (plain.length <= room) return plain;
  // Config names start with a letter or digit, so something is always left.
  return plain.slice(0, room).replace(/[._-]+$/, '') || plain.slice(0, 1);
}
