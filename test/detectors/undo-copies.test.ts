import { describe, expect, it } from 'vitest';
import type { RestorePoint } from '../../src/api/schemas.js';
import { runDetectors } from '../../src/detectors/registry.js';
import * as fx from './fixtures.js';

const ON = 'checks: { undo_copies: { enabled: true } }';

const findingsOf = (points: Partial<RestorePoint>[], yaml = ON) =>
  runDetectors(
    fx.maintenanceSnapshot([fx.app()], new Map([[1, points.map(fx.restorePoint)]])),
    fx.optionsOf(yaml),
    fx.NOW,
  ).findings;

describe('undo_copies', () => {
  it.each<[string, Partial<RestorePoint>[], string[]]>([
    ['none read', [], []],
    ['copy held, within kept_until', [{}], []],
    ['copy held, past kept_until by less than the grace', [{ kept_until: fx.ago(23 * fx.HOUR) }], []],
    ['copy held, past kept_until and the grace', [{ kept_until: fx.ago(2 * fx.DAY) }], ['undo_copies/copy/80']],
    ['copy let go, past kept_until', [{ kept_until: fx.ago(2 * fx.DAY), instant_undo: false }], []],
    ['copy held, no kept_until', [{ kept_until: null }], []],
  ])('a restore point with its %s', (_name, points, prints) => {
    const findings = findingsOf(points);
    fx.expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(prints);
  });

  it('names the app, the point and its kept_until, a warning with the facts', () => {
    const keptUntil = fx.ago(2 * fx.DAY);
    expect(findingsOf([{ kept_until: keptUntil }])).toMatchObject([
      {
        severity: 'warning',
        summary: `shop-prod (production) still holds the database copy of restore point #80, kept until ${keptUntil}`,
        details: { app: 'shop-prod (production)', restore_point: '#80', kept_until: keptUntil },
        since: keptUntil,
        subject: { type: 'app', id: 1 },
        facts: [
          { label: 'Restore point', value: '#80' },
          { label: 'Kept until', value: keptUntil, kind: 'time' },
        ],
      },
    ]);
  });

  it('is off by default, and its grace is configurable', () => {
    expect(findingsOf([{ kept_until: fx.ago(2 * fx.DAY) }], '')).toEqual([]);
    const yaml = 'checks: { undo_copies: { enabled: true, grace: 1h } }';
    expect(findingsOf([{ kept_until: fx.ago(2 * fx.HOUR) }], yaml)).toHaveLength(1);
  });

  it('keeps only the apps with an overdue copy', () => {
    const records = {
      overdue: fx.inFull(fx.app(), [fx.restorePoint({ kept_until: fx.ago(2 * fx.DAY) })]),
      'within its time': fx.inFull(fx.app(), [fx.restorePoint()]),
    };
    expect(fx.keptBy('maintenance', ON, records)).toEqual(['overdue']);
  });
});
