import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether two strings are the same, in a time that does not depend on where they differ: both are
 * hashed first, so their lengths are not compared either (nor is a secret's length told).
 */
export function sameText(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected)) && given === expected;
}
