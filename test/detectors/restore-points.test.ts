import { describe, expect, it } from 'vitest';
import type { EnvironmentType, RestorePoint } from '../../src/api/schemas.js';
import { detectorOptionsFromConfig, runDetectors } from '../../src/detectors/registry.js';
import { restorePoints } from '../../src/detectors/restore-points.js';
import {
  app,
  checksOf,
  expectWellFormed,
  HOUR,
  inFull,
  keptBy,
  maintenanceSnapshot,
  NOW,
  restorePoint,
} from './fixtures.js';

const findingsOf = (points: Partial<RestorePoint>[], environment_type: EnvironmentType | null = 'production') =>
  restorePoints(maintenanceSnapshot([app({ environment_type })], new Map([[1, points.map(restorePoint)]])));

describe('restorePoints', () => {
  it.each<[string, Partial<RestorePoint>[], string[]]>([
    ['none read', [], []],
    ['applied, not held', [{}], []],
    ['kept (the change failed, the app left as before)', [{ outcome: 'kept', instant_undo: false }], []],
    ['failed (the app may be half-updated: the failed run says so)', [{ outcome: 'failed' }], []],
    ['held', [{ held: true }], ['restore_points/held/80']],
    [
      'held, behind a newer point',
      [{ id: 81 }, { id: 80, at: new Date(NOW - 3 * HOUR).toISOString(), held: true }],
      ['restore_points/held/80'],
    ],
  ])('an app with restore points %s', (_name, points, prints) => {
    const findings = findingsOf(points);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(prints);
  });

  it.each<[EnvironmentType | null]>([['production'], ['staging'], [null]])(
    'a held point in %s is a warning: nothing is down, the updates wait',
    (env) => {
      expect(findingsOf([{ held: true }], env)[0]?.severity).toBe('warning');
    },
  );

  it('names the app, the point and the change it undid, labelled like the other app checks', () => {
    expect(findingsOf([{ held: true }])).toEqual([
      {
        fingerprint: 'restore_points/held/80',
        check: 'restore_points',
        severity: 'warning',
        summary:
          'shop-prod (production) was rolled back to restore point #80 (from before its update) and is held there: its auto-updates wait until the point is let go',
        details: {
          app: 'shop-prod (production)',
          restore_point: '#80',
          outcome: 'applied',
          action: 'update',
          at: new Date(NOW - HOUR).toISOString(),
          run: '#100',
        },
        labels: {
          check: 'restore_points',
          namespace: 'acme',
          project: 'shop',
          environment_type: 'production',
          app: 'shop-prod',
          server: 'web-01',
        },
        url: 'https://shop.example.com',
        since: null,
        subject: { type: 'app', id: 1 },
      },
    ]);
  });

  it('leaves out of the details what the point does not say', () => {
    const [finding] = findingsOf([{ held: true, action: null, at: null, run_id: null }]);
    expect(finding?.details).toEqual({ app: 'shop-prod (production)', restore_point: '#80', outcome: 'applied' });
    expect(finding?.summary).toMatch(/rolled back to restore point #80 and is held there/);
  });

  it('is presented with the point, the change, its time and a brief', () => {
    const { findings } = runDetectors(
      maintenanceSnapshot([app()], new Map([[1, [restorePoint({ held: true })]]])),
      { restore_points: { enabled: true } },
      NOW,
    );
    expect(findings).toMatchObject([
      {
        facts: [
          { label: 'Restore point', value: '#80' },
          { label: 'Change', value: 'update' },
          { label: 'Made at', value: new Date(NOW - HOUR).toISOString(), kind: 'time' },
          { label: 'Outcome', value: 'applied' },
          { label: 'Run', value: '#100' },
        ],
        brief: 'held at restore point #80',
      },
    ]);
  });
});

describe('checks.restore_points', () => {
  it.each([
    ['', undefined],
    ['checks: { restore_points: { enabled: true } }', { enabled: true }],
    ['checks: { restore_points: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).restore_points).toEqual(expected);
  });

  it('refuses a key it does not know', () => {
    expect(() => checksOf('checks: { restore_points: { limit: 10 } }')).toThrow('limit');
  });
});

describe('what the maintenance job keeps for restore_points', () => {
  const records = {
    held: inFull(app(), [restorePoint({ held: true })]),
    'not held': inFull(app(), [restorePoint()]),
    'none read': inFull(app()),
  };

  it.each([
    ['off (the default)', '', []],
    ['on', 'checks: { restore_points: { enabled: true } }', ['held']],
  ])('%s: keeps the apps held at a restore point', (_name, yaml, kept) => {
    expect(keptBy('maintenance', yaml, records)).toEqual(kept);
  });
});
