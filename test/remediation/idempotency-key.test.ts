/** Idempotency keys: the format and the length limit as a table, and the parts refused. */
import { describe, expect, it } from 'vitest';
import { idempotencyKey, MAX_KEY_LENGTH, type KeyParts } from '../../src/remediation/idempotency-key.js';

const BASE: KeyParts = {
  installation: '3f9a0c12de',
  number: 17,
  policy: 'retry-nonprod',
  recordType: 'run',
  recordId: 123,
  attempt: 1,
};
const LONG = 'a-very-long-policy-name-that-goes-on.and_on-and-on-and-on-for-a-while';
const MAX = Number.MAX_SAFE_INTEGER;

describe('idempotencyKey', () => {
  it.each<[string, Partial<KeyParts>, string]>([
    ['installation, key number, policy, record, attempt', {}, 'dw-3f9a0c12de.17-retry-nonprod-run123-a1'],
    [
      'an app record, a later attempt',
      { policy: 'backup-prod', recordType: 'app', recordId: 7, attempt: 2, number: 1 },
      'dw-3f9a0c12de.1-backup-prod-app7-a2',
    ],
    [
      'another installation: another key for the same record and attempt',
      { installation: '0b71e4a9c2' },
      'dw-0b71e4a9c2.17-retry-nonprod-run123-a1',
    ],
    [
      'another key number: another key for the same record and attempt',
      { number: 18 },
      'dw-3f9a0c12de.18-retry-nonprod-run123-a1',
    ],
    // 64 - "dw-3f9a0c12de.17-" (17) - "-run123-a1" (10) = 37 characters for the policy; the 37th is a ".".
    [
      'a long policy name: cut to what fits',
      { policy: LONG },
      'dw-3f9a0c12de.17-a-very-long-policy-name-that-goes-on-run123-a1',
    ],
    [
      'a cut never ends on a separator',
      { policy: `${'p'.repeat(36)}-and-more` },
      `dw-3f9a0c12de.17-${'p'.repeat(36)}-run123-a1`,
    ],
    [
      'a policy exactly as long as the room: kept whole',
      { policy: 'q'.repeat(37) },
      `dw-3f9a0c12de.17-${'q'.repeat(37)}-run123-a1`,
    ],
    [
      'characters a key cannot carry become "_"',
      { policy: 'retry staging/ü' },
      'dw-3f9a0c12de.17-retry_staging__-run123-a1',
    ],
    [
      'the largest ids leave a policy of one character',
      { installation: 'a'.repeat(16), number: MAX, recordId: MAX, attempt: 9999 },
      `dw-${'a'.repeat(16)}.${MAX}-r-run${MAX}-a9999`,
    ],
  ])('%s', (_what, over, expected) => {
    const key = idempotencyKey({ ...BASE, ...over });
    expect(key).toBe(expected);
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(key).toMatch(/^[A-Za-z0-9._-]+$/);
  });

  it('is the same for the same parts (a key is derived, never drawn at send time)', () => {
    expect(idempotencyKey(BASE)).toBe(idempotencyKey({ ...BASE }));
  });

  it.each<[string, Partial<KeyParts>, string]>([
    ['record id 0', { recordId: 0 }, 'record id must be a positive integer'],
    ['attempt 0', { attempt: 0 }, 'attempt must be a positive integer'],
    ['a fractional record id', { recordId: 1.5 }, 'record id must be a positive integer'],
    ['key number 0', { number: 0 }, 'key number must be a positive integer'],
    ['an empty installation id', { installation: '' }, 'installation id must be 8-16 lowercase letters or digits'],
    ['an installation id with a separator', { installation: '3f9a0c12-de' }, 'installation id must be'],
    [
      'no room left for the policy',
      { installation: 'a'.repeat(16), number: MAX, recordId: MAX, attempt: 99_999 },
      `would be longer than ${MAX_KEY_LENGTH}`,
    ],
  ])('refuses %s', (_what, over, message) => {
    expect(() => idempotencyKey({ ...BASE, ...over })).toThrow(RangeError);
    expect(() => idempotencyKey({ ...BASE, ...over })).toThrow(message);
  });
});
