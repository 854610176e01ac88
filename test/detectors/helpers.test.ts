import { describe, expect, it } from 'vitest';
import { buildLabels } from '../../src/detectors/build-labels.js';
import { contentHash, fingerprint, stableJson } from '../../src/detectors/fingerprint.js';
import { keyInWords } from '../../src/detectors/key-in-words.js';
import { factsFrom } from '../../src/detectors/presentation.js';
import { recordFinding } from '../../src/detectors/record-finding.js';
import { parseTime, toIso } from '../../src/lib/parse-time.js';
import { NOW } from './fixtures.js';

describe('fingerprint', () => {
  it.each<[(string | number)[], string]>([
    [['failed_runs', 'run', 123], 'failed_runs/run/123'],
    [['backups', 'app', 1, 'offsite', 's3/eu'], 'backups/app/1/offsite/s3%2Feu'],
    [['a', '50%'], 'a/50%25'],
  ])('%j → %s', (parts, expected) => {
    expect(fingerprint(...parts)).toBe(expected);
  });

  it('keeps distinct part lists distinct', () => {
    expect(fingerprint('a/b', 'c')).not.toBe(fingerprint('a', 'b/c'));
  });
});

describe('contentHash', () => {
  it('ignores key order at every depth', () => {
    expect(contentHash({ a: 1, b: { c: [1, { d: 2, e: 3 }] } })).toBe(
      contentHash({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 }),
    );
    expect(stableJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  it('tells different content apart, and is short hex', () => {
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
    expect(contentHash([1, 2])).not.toBe(contentHash([2, 1]));
    expect(contentHash({ a: 1 })).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('buildLabels', () => {
  it('leaves out null, undefined and empty values and stringifies numbers', () => {
    expect(
      buildLabels('backups', { app: 'shop', server: null, project: undefined, env: '', id: 7, check: 'x' }),
    ).toEqual({
      check: 'backups',
      app: 'shop',
      id: '7',
    });
  });
});

describe('time', () => {
  it.each<[string | null, number | null, string | null]>([
    ['2026-11-01T12:00:00Z', NOW, '2026-11-01T12:00:00.000Z'],
    ['2026-11-01T13:00:00+01:00', NOW, '2026-11-01T12:00:00.000Z'],
    ['not a time', null, null],
    [null, null, null],
    ['', null, null],
  ])('%s', (raw, ms, iso) => {
    expect(parseTime(raw)).toBe(ms);
    expect(toIso(raw)).toBe(iso);
  });
});

describe('factsFrom', () => {
  const facts = factsFrom(['state', 'newest_backup', ['ssl_status', 'SSL status'], ['taken_at', 'Taken', 'time']]);
  const finding = (details: Record<string, string>) => ({ summary: '', labels: { check: 'backups' }, details });

  it.each<[Record<string, string>, { label: string; value: string; kind?: 'time' }[]]>([
    // A bare key is shown under the key in words; a pair or triple under its own label.
    [
      { taken_at: '2026-01-01T00:00:00.000Z', ssl_status: 'error', newest_backup: '#7', state: 'failed' },
      [
        { label: 'State', value: 'failed' },
        { label: 'Newest backup', value: '#7' },
        { label: 'SSL status', value: 'error' },
        { label: 'Taken', value: '2026-01-01T00:00:00.000Z', kind: 'time' },
      ],
    ],
    // Absent and empty values are left out; keys the spec does not name are not shown.
    [{ state: '', newest_backup: '#7', other: 'x' }, [{ label: 'Newest backup', value: '#7' }]],
    [{}, []],
  ])('%j → %j', (details, expected) => {
    expect(facts(finding(details))).toEqual(expected);
  });
});

describe('keyInWords', () => {
  it.each([
    ['state', 'State'],
    ['newest_backup', 'Newest backup'],
    ['retrying-grace', 'Retrying grace'],
    ['_odd__key_', 'Odd key'],
  ])('%s → %s', (key, words) => {
    expect(keyInWords(key)).toBe(words);
  });
});

describe('recordFinding', () => {
  it.each<[string[], string]>([
    [[], 'url_checks/url/7'],
    [['unchecked'], 'url_checks/url/7/unchecked'],
  ])('fingerprints the record by check, type, id and sub-problem %j', (problem, expected) => {
    const labels = { host: 'shop.example.com', server: null };
    expect(recordFinding('url_checks', { type: 'url', id: 7 }, labels, 'https://shop.example.com', ...problem)).toEqual(
      {
        fingerprint: expected,
        check: 'url_checks',
        labels: buildLabels('url_checks', labels),
        url: 'https://shop.example.com',
        subject: { type: 'url', id: 7 },
      },
    );
  });
});
