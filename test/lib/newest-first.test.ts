import { describe, expect, it } from 'vitest';
import { isNewer, orderKey, sortNewestFirst, type TimedRecord } from '../../src/lib/newest-first.js';

const rec = (id: number, created_at: string | null, updated_at: string | null = null): TimedRecord => ({
  id,
  created_at,
  updated_at,
});

describe('sortNewestFirst', () => {
  it.each<[string, TimedRecord[], number[]]>([
    [
      'by creation time',
      [rec(1, '2026-11-01T10:00:00Z'), rec(2, '2026-11-01T12:00:00Z'), rec(3, '2026-11-01T11:00:00Z')],
      [2, 3, 1],
    ],
    ['the same time: the higher id first', [rec(4, '2026-11-01T10:00:00Z'), rec(9, '2026-11-01T10:00:00Z')], [9, 4]],
    [
      'no creation time: the update time stands in',
      [rec(1, null, '2026-11-01T12:00:00Z'), rec(2, '2026-11-01T11:00:00Z')],
      [1, 2],
    ],
    [
      'no time at all, or an unreadable one: last, by id',
      [rec(1, null), rec(2, 'garbage'), rec(3, '2026-11-01T11:00:00Z')],
      [3, 2, 1],
    ],
  ])('%s', (_what, records, ids) => {
    expect(sortNewestFirst([...records]).map((r) => r.id)).toEqual(ids);
    // The list's own order does not matter.
    expect(sortNewestFirst([...records].reverse()).map((r) => r.id)).toEqual(ids);
    // orderKey and isNewer keep the same order without the records.
    const keys = sortNewestFirst([...records]).map(orderKey);
    for (let i = 1; i < keys.length; i++) expect(isNewer(keys[i - 1]!, keys[i]!)).toBe(true);
  });
});

describe('sortNewestFirst, in place', () => {
  it('sorts the array it is given, records without times last', () => {
    const records: TimedRecord[] = [
      { id: 1, created_at: null, updated_at: null },
      { id: 2, created_at: '2026-11-01T10:00:00Z', updated_at: null },
      { id: 3, created_at: null, updated_at: '2026-11-01T11:00:00Z' },
      { id: 4, created_at: '2026-11-01T10:00:00Z', updated_at: null },
      { id: 5, created_at: 'not a time', updated_at: '2026-11-01T09:00:00Z' },
    ];
    const sorted = sortNewestFirst(records);
    expect(sorted).toBe(records);
    expect(records.map((r) => r.id)).toEqual([3, 4, 2, 5, 1]);
  });
});
