import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/lib/retry-after.js';

const now = Date.UTC(2026, 10, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  it.each<[string, string | string[] | null | undefined, number | undefined]>([
    ['delta-seconds', '3', 3_000],
    ['zero seconds', '0', 0],
    ['spaces around', ' 12 ', 12_000],
    ['a large delay, not capped here', '999999', 999_999_000],
    ['an HTTP-date 5 s ahead', new Date(now + 5_000).toUTCString(), 5_000],
    ['an HTTP-date in the past', new Date(now - 5_000).toUTCString(), 0],
    ['the first of repeated headers', ['7', '9'], 7_000],
    ['garbage', 'soon', undefined],
    ['a negative number', '-3', undefined],
    ['empty', '', undefined],
    ['absent', undefined, undefined],
    ['null', null, undefined],
  ])('%s', (_name, header, expected) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});
