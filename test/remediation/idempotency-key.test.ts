/** Derived idempotency keys: deterministic, short, plain, distinct. */
import { describe, expect, it } from 'vitest';
import { idempotencyKey, MAX_KEY_LENGTH } from '../../src/remediation/idempotency-key.js';

describe('idempotencyKey', () => {
  it('names the policy, the record and the attempt', () => {
    expect(idempotencyKey('retry-staging', 'run', 123, 1)).toBe('dw-retry-staging-run123-a1');
    expect(idempotencyKey('backup-prod', 'app', 7, 2)).toBe('dw-backup-prod-app7-a2');
  });

  it('is the same every time (a restart derives the key it stored)', () => {
    expect(idempotencyKey('p', 'run', 5, 3)).toBe(idempotencyKey('p', 'run', 5, 3));
  });

  it('stays within the length and characters a service accepts, even for long names', () => {
    const long = 'a-very-long-policy-name-that-goes-on.and_on-and-on-and-on-for-a-while';
    const key = idempotencyKey(long, 'run', Number.MAX_SAFE_INTEGER, 999_999);
    expect(key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(key).toMatch(/^[A-Za-z0-9._-]+$/);
    // Two long names with the same beginning do not share keys.
    expect(idempotencyKey(`${long}-x`, 'run', 1, 1)).not.toBe(idempotencyKey(`${long}-y`, 'run', 1, 1));
  });

  it.each([
    [0, 1],
    [1, 0],
    [1.5, 1],
  ])('refuses record %s attempt %s', (record, attempt) => {
    expect(() => idempotencyKey('p', 'run', record, attempt)).toThrow(RangeError);
  });
});
