import { describe, expect, it } from 'vitest';
import type { Labels, Severity } from '../../src/lib/alert-vocabulary.js';
import type { RouteSettings } from '../../src/notify/notify-settings.js';
import { Router } from '../../src/notify/router.js';

const CHANNELS = ['slack', 'mail', 'pager', 'log'];
const ALERTS = { repeat_interval: 4 * 3600_000, send_resolved: true };

const ROUTES: RouteSettings[] = [
  // Production criticals page and also go on to the general routes.
  {
    name: 'prod-critical',
    match: { environment_type: 'production' },
    min_severity: 'critical',
    channels: ['pager'],
    continue: true,
  },
  { name: 'prod', match: { environment_type: 'production' }, channels: ['slack', 'mail'], continue: false },
  {
    name: 'shop-projects',
    match_re: { project: 'shop-.*' },
    channels: ['mail'],
    continue: false,
    send_resolved: false,
    repeat_interval: 3600_000,
  },
  {
    name: 'certs',
    match: { check: 'certificates', namespace: ['acme', 'globex'] },
    channels: ['slack'],
    continue: false,
  },
];

const router = Router.fromSettings(
  { routes: ROUTES, group_by: ['check', 'environment_type'], mute_windows: [] },
  ALERTS,
  CHANNELS,
);

describe('Router.route', () => {
  it.each<[string, Partial<Labels>, Severity, string[]]>([
    [
      'prod critical: pager, then continue to prod',
      { environment_type: 'production' },
      'critical',
      ['pager:prod-critical', 'slack:prod', 'mail:prod'],
    ],
    [
      'prod warning: below min_severity, prod only',
      { environment_type: 'production' },
      'warning',
      ['slack:prod', 'mail:prod'],
    ],
    [
      'first match stops the walk (prod before shop-*)',
      { environment_type: 'production', project: 'shop-eu' },
      'warning',
      ['slack:prod', 'mail:prod'],
    ],
    ['anchored regex matches', { environment_type: 'staging', project: 'shop-eu' }, 'info', ['mail:shop-projects']],
    [
      'anchored regex: no partial match',
      { environment_type: 'staging', project: 'myshop-eu' },
      'info',
      ['slack:default', 'mail:default', 'pager:default', 'log:default'],
    ],
    [
      'list value: any of them',
      { check: 'certificates', namespace: 'globex', environment_type: 'staging' },
      'warning',
      ['slack:certs'],
    ],
    [
      'list value: not in the list falls to the default route',
      { check: 'certificates', namespace: 'initech', environment_type: 'staging' },
      'warning',
      ['slack:default', 'mail:default', 'pager:default', 'log:default'],
    ],
  ])('%s', (_name, labels, severity, expected) => {
    const targets = router.route({ check: 'failed_runs', ...labels } as Labels, severity);
    expect(targets.map((t) => `${t.channel}:${t.route.name}`)).toEqual(expected);
  });

  it('fills route settings from alerts and notify defaults', () => {
    const [shop] = router.route({ check: 'failed_runs', project: 'shop-x' }, 'info');
    expect(shop?.route).toMatchObject({
      name: 'shop-projects',
      sendResolved: false,
      repeatIntervalMs: 3600_000,
      groupBy: ['check', 'environment_type'],
    });
    const [prod] = router.route({ check: 'failed_runs', environment_type: 'production' }, 'info');
    expect(prod?.route).toMatchObject({ sendResolved: true, repeatIntervalMs: 4 * 3600_000 });
  });

  it('answers the smallest repeat interval of all routes for the lifecycle', () => {
    expect(router.smallestRepeatIntervalMs()).toBe(3600_000);
  });

  it('a catch-all route (no match) takes everything the earlier routes left', () => {
    const r = Router.fromSettings(
      {
        routes: [
          { match: { environment_type: 'production' }, channels: ['pager'], continue: false },
          { channels: ['log'], continue: false },
        ],
        group_by: [],
        mute_windows: [],
      },
      ALERTS,
      CHANNELS,
    );
    expect(
      r.route({ check: 'backups', environment_type: 'staging' }, 'info').map((t) => `${t.channel}:${t.route.name}`),
    ).toEqual(['log:route-2']);
    expect(r.route({ check: 'backups', environment_type: 'production' }, 'info').map((t) => t.channel)).toEqual([
      'pager',
    ]);
  });
});
