/** What a cycle says of the records it set aside: the count by reason, and a warning per value met. */
import { describe, expect, it } from 'vitest';
import type { QuarantinedRecord } from '../../src/api/quarantine.js';
import { reportSkippedRecords } from '../../src/app/skipped-records-report.js';
import { WarnedOnce } from '../../src/app/warned-once.js';
import { Metrics } from '../../src/lib/metrics.js';
import { captureLogger } from './fixtures.js';

/** A URL whose ssl_status is `value`, beyond the stated ones. */
function odd(id: number, value: string): QuarantinedRecord {
  const detail = `ssl_status: ${JSON.stringify(value)} is not a stated value`;
  return {
    kind: 'url',
    id,
    fn: 'urls.list',
    reason: 'unknown_value',
    detail,
    field: 'ssl_status',
    value,
    subjects: [],
  };
}

describe('values beyond the stated ones', () => {
  it('warns once per value, and of at most 20 values a field, however many the service invents', () => {
    const capture = captureLogger('info');
    const deps = { metrics: new Metrics(), warned: new WarnedOnce() };
    // An error text in a state field: a new value on every record, every cycle, for months.
    for (let cycle = 0; cycle < 10; cycle++) {
      const records = Array.from({ length: 100 }, (_, i) => odd(i, `handshake failed #${cycle * 100 + i}`));
      reportSkippedRecords(deps, 'urls', capture.logger, records);
    }
    reportSkippedRecords(deps, 'urls', capture.logger, [odd(1, 'handshake failed #0')]);
    const warnings = capture.lines().filter((l) => l.level === 40);
    expect(warnings).toHaveLength(20);
    expect(warnings.at(-1)!.msg).toMatch(/No more values of ssl_status from urls\.list are warned of/);
  });
});

describe('WarnedOnce', () => {
  it('tells the groups apart: one group gone quiet leaves the others their own values', () => {
    const warned = new WarnedOnce(2);
    expect(['a', 'a', 'b', 'c'].map((w) => warned.take('run', w))).toEqual(['warn', 'quiet', 'last', 'quiet']);
    expect(warned.take('app', 'a')).toBe('warn');
  });
});
