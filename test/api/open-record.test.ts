/**
 * An open record (an attention item, whose fields the reference does not show) past its depth or
 * width is cut to its top-level plain fields, with a note; within them it is kept as it came. And
 * end to end: an attention item 3,000 levels deep, or with 126,000 fields, is still told, bounded,
 * and the attention job completes.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { boundOpenRecord, OPEN_RECORD_LIMITS, SHAPE_CUT_FIELD } from '../../src/api/open-record.js';
import { engineHarness } from '../app/fixtures.js';

function nested(levels: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

function wide(fields: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < fields; i++) out[`f${i}`] = i;
  return out;
}

describe('boundOpenRecord', () => {
  it('keeps a record within the limits as it is, the very object', () => {
    const item = { id: 7, name: 'shop', app: { id: 3, tags: ['a', 'b'] }, deep: nested(OPEN_RECORD_LIMITS.depth - 1) };
    expect(boundOpenRecord(item)).toBe(item);
  });

  it.each([
    ['3,000 levels deep', { id: 7, name: 'shop', reason: 'disk full', deep: nested(3_000) }, /nested deeper than 32/],
    [
      'one level past the depth',
      { id: 7, name: 'shop', reason: 'disk full', deep: nested(OPEN_RECORD_LIMITS.depth + 1) },
      /nested deeper/,
    ],
    ['126,000 fields wide', { id: 7, name: 'shop', reason: 'disk full', ...wide(126_000) }, /more than 1000 fields/],
    ['wide below the top', { id: 7, name: 'shop', reason: 'disk full', inner: wide(5_000) }, /more than 1000 fields/],
  ])('cuts a record %s to its first top-level plain fields, and says so', (_name, item, note) => {
    const cut = boundOpenRecord(item);
    expect(cut).toMatchObject({ id: 7, name: 'shop', reason: 'disk full' });
    expect(cut[SHAPE_CUT_FIELD]).toMatch(note);
    expect(Object.keys(cut).length).toBeLessThanOrEqual(OPEN_RECORD_LIMITS.fields + 1);
    expect(cut).not.toHaveProperty('deep');
    expect(cut).not.toHaveProperty('inner');
  });
});

const engine = engineHarness({ apps: 8 });

describe('an attention item past the limits, from the service', () => {
  it.each([
    ['3,000 levels deep', 'sections.0.items.0.deep', nested(3_000)],
    ['with 126,000 fields', 'sections.0.items.0.wide', wide(126_000)],
  ])('%s: the attention job completes and the item is told, cut and marked', async (_name, field, value) => {
    const { sim } = engine;
    const url = [...sim.control.state.urls.keys()][0]!;
    sim.control.checks.certificates.expire(url, { inDays: -1 });
    sim.control.setFault('attention.list', { recordField: { field, value } });
    const wd = engine.watchdog('checks:\n  attention: { min_severity: info, fold_wait: 0s, reported_by: {} }');
    const report = await wd.runOnce(['attention']);
    expect(report.jobs[0]).toMatchObject({ job: 'attention', outcome: 'ok' });
    const items = alertStoreOf(wd.store)
      .open()
      .filter((a) => a.fingerprint.startsWith('attention/'));
    expect(items.length).toBeGreaterThan(0);
    const told = JSON.stringify(items.map((a) => a.details));
    expect(told).toContain(SHAPE_CUT_FIELD);
    expect(told.length).toBeLessThan(200_000);
  });
});
