import { describe, expect, it } from 'vitest';
import type { App, AppUpgrade, EnvironmentType } from '../../src/api/schemas.js';
import type { OpenSubject } from '../../src/lib/alert-vocabulary.js';
import {
  FAILED_UPGRADE_STATES,
  STANDBY_UPGRADE_STATES,
  UNDER_WAY_UPGRADE_STATES,
} from '../../src/config/state-words.js';
import { detectorOptionsFromConfig, presentationOf, runDetectors } from '../../src/detectors/registry.js';
import { upgrades, upgradesConfig, type UpgradesConfig } from '../../src/detectors/upgrades.js';
import { formatDuration } from '../../src/lib/format-duration.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import {
  app,
  checksOf,
  DAY,
  expectWellFormed,
  HOUR,
  inFull,
  keptBy,
  maintenanceSnapshot,
  MINUTE,
  NOW,
  resolutionOf,
  upgrade,
} from './fixtures.js';

const options = upgradesConfig.parse({ fold_wait: '0s' });

const findingsOf = (apps: App[], o: UpgradesConfig = options) => upgrades(maintenanceSnapshot(apps), o).findings;

describe('upgrades', () => {
  it.each(
    Object.values(VOCABULARY.upgrade).map(
      (state) =>
        [
          state,
          FAILED_UPGRADE_STATES.includes(state)
            ? ['upgrades/failed/30']
            : STANDBY_UPGRADE_STATES.includes(state)
              ? ['upgrades/standby/30']
              : UNDER_WAY_UPGRADE_STATES.includes(state)
                ? ['upgrades/stuck/30']
                : [],
        ] as const,
    ),
  )('an upgrade %s is reported as %j', (state, prints) => {
    const findings = findingsOf([app({ upgrade: upgrade({ state }) })]);
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(prints);
  });

  it('reports nothing for an app without an open upgrade', () => {
    expect(findingsOf([app()])).toEqual([]);
  });

  it.each<[string, AppUpgrade['purpose'], EnvironmentType | null, string]>([
    ['a production upgrade of a production app', 'production', 'production', 'critical'],
    ['a production upgrade of a staging app', 'production', 'staging', 'warning'],
    ['a test upgrade of a production app', 'test', 'production', 'warning'],
    ['a production upgrade outside any environment', 'production', null, 'warning'],
  ])('%s that failed is %s', (_name, purpose, environment_type, severity) => {
    const [finding] = findingsOf([app({ environment_type, upgrade: upgrade({ state: 'failed', purpose }) })]);
    expect(finding?.severity).toBe(severity);
  });

  it('says a failed upgrade at once, named and labelled like the app it upgrades', () => {
    expect(findingsOf([app({ upgrade: upgrade({ state: 'failed', purpose: 'production' }) })])).toEqual([
      {
        fingerprint: 'upgrades/failed/30',
        check: 'upgrades',
        severity: 'critical',
        summary: 'Upgrade of shop-prod (production) from 18.0 to 19.0 (production) failed',
        details: {
          app: 'shop-prod (production)',
          upgrade: '#30',
          state: 'failed',
          from: '18.0',
          to: '19.0',
          purpose: 'production',
        },
        labels: {
          check: 'upgrades',
          namespace: 'acme',
          project: 'shop',
          environment_type: 'production',
          app: 'shop-prod',
          server: 'web-01',
          purpose: 'production',
          problem: 'failed',
        },
        url: 'https://shop.example.com',
        since: null,
        subject: { type: 'app', id: 1 },
      },
    ]);
  });

  it('holds an upgrade in standby back for standby_max_duration, a warning that says what it blocks', () => {
    const [finding] = findingsOf([app({ upgrade: upgrade() })], { ...options, standby_max_duration: 12 * HOUR });
    expect(finding).toMatchObject({
      severity: 'warning',
      holdForMs: 12 * HOUR,
      holdReason: 'told once seen for 12h (checks.upgrades.standby_max_duration): the service does not say since when',
      summary:
        "Upgrade of shop-prod (production) from 18.0 to 19.0 has waited in standby for more than 12h: the app's restarts and updates are refused until it moves on",
      details: { max_duration: '12h' },
    });
  });

  // The rule "an upgrade stuck in requested or testing", with the resolution that says it moved on.
  it.each<[string, string, Partial<UpgradesConfig>, string | null]>([
    ['requested', 'requested', {}, 'has been requested for more than 6h: it looks stuck'],
    ['testing', 'testing', {}, 'has been testing for more than 6h: it looks stuck'],
    [
      'testing, with its own max',
      'testing',
      { stuck_max_duration: 2 * DAY },
      'has been testing for more than 2d: it looks stuck',
    ],
    ['testing, stuck_states empty', 'testing', { stuck_states: [] }, null],
    ['a word of the config', 'verifying', { stuck_states: ['verifying'] }, 'has been verifying for more than 6h'],
  ])('an upgrade %s is held stuck_max_duration, then a warning', (_name, state, o, text) => {
    const opts = { ...options, ...o };
    const findings = findingsOf([app({ upgrade: upgrade({ state, purpose: 'test' }) })], opts);
    expectWellFormed(findings);
    if (text === null) return void expect(findings).toEqual([]);
    expect(findings).toMatchObject([
      {
        fingerprint: 'upgrades/stuck/30',
        severity: 'warning',
        holdForMs: opts.stuck_max_duration,
        labels: { problem: 'stuck', purpose: 'test' },
        details: { state, max_stuck: formatDuration(opts.stuck_max_duration) },
      },
    ]);
    expect(findings[0]!.summary).toContain(`Upgrade of shop-prod (production) from 18.0 to 19.0 (test) ${text}`);
    expect(presentationOf('upgrades')!.nextStep!(findings[0]!)).toMatch(/^Open the upgrade on the platform/);
    // Over once the platform moves it on: the resolution says where it is now.
    const moved = maintenanceSnapshot([app({ upgrade: upgrade({ state: 'done' }) })]);
    expect(resolutionOf(findings[0]!, moved, { upgrades: opts })).toBe('the upgrade is done now');
    expect(resolutionOf(findings[0]!, maintenanceSnapshot([app()]), { upgrades: opts })).toBe('the upgrade is closed');
  });

  it.each<[string, App[], number]>([
    [
      'the old app and the new one: the old app',
      [
        app({
          id: 9,
          name: 'shop-prod-19',
          environment_type: 'staging',
          upgrade: upgrade({ new_app_id: 9, new_app: 'shop-prod-19' }),
        }),
        app({ upgrade: upgrade({ new_app_id: 9, new_app: 'shop-prod-19' }) }),
      ],
      1,
    ],
    [
      'the new app alone: the new app',
      [
        app({
          id: 9,
          name: 'shop-prod-19',
          environment_type: 'staging',
          upgrade: upgrade({ new_app_id: 9, new_app: 'shop-prod-19' }),
        }),
      ],
      9,
    ],
  ])('one finding per upgrade seen from %s', (_name, apps, subject) => {
    const findings = findingsOf(apps);
    expect(findings.map((f) => [f.fingerprint, f.subject?.id])).toEqual([['upgrades/standby/30', subject]]);
    expect(findings[0]?.summary).toMatch(/^Upgrade of shop-prod( \(production\))? from 18\.0 to 19\.0/);
  });

  it('is presented with its state, versions and purpose, and a brief', () => {
    const { findings } = runDetectors(
      maintenanceSnapshot([app({ upgrade: upgrade({ state: 'failed', new_app: 'shop-prod-19', new_app_id: 9 }) })]),
      { upgrades: options },
      NOW,
    );
    expect(findings).toMatchObject([
      {
        facts: [
          { label: 'State', value: 'failed' },
          { label: 'From version', value: '18.0' },
          { label: 'To version', value: '19.0' },
          { label: 'Purpose', value: 'test' },
          { label: 'New app', value: 'shop-prod-19' },
        ],
        brief: '18.0 → 19.0 failed',
      },
    ]);
  });
});

describe('a failed upgrade whose run failed: one problem, one alert', () => {
  const WAIT = 5 * MINUTE;
  const failedRun = (runId: number, appId: number, workflow: string, action: string): OpenSubject => ({
    check: 'failed_runs',
    subject: { type: 'run', id: runId },
    details: { app_id: String(appId), workflow, action },
  });
  /** App 1 (shop-prod) upgrades to the new app 9; the upgrade failed. */
  const detect = (reported: OpenSubject[], o: Partial<UpgradesConfig> = {}) =>
    upgrades(
      {
        ...maintenanceSnapshot([
          app({ upgrade: upgrade({ state: 'failed', new_app_id: 9, new_app: 'shop-prod-19' }) }),
        ]),
        reported,
      },
      { ...options, fold_wait: WAIT, ...o },
    );

  it.each<[string, OpenSubject]>([
    ['the upgraded app', failedRun(5981, 1, 'app_upgrade', 'upgrade')],
    ['the new app', failedRun(5981, 9, 'app_upgrade', 'upgrade')],
  ])('is folded into the failed_runs alert of its upgrade run on %s, and kept as it is', (_name, run) => {
    expect(detect([run])).toEqual({
      findings: [],
      incomplete: ['upgrades/failed/30'],
      folded: [{ fingerprint: 'upgrades/failed/30', reason: 'reported by failed_runs (run 5981)' }],
    });
  });

  it('matches the run by its workflow as well as its action (run_words)', () => {
    expect(detect([failedRun(7, 1, 'app_upgrade', 'migrate')], { run_words: ['app_upgrade'] }).findings).toEqual([]);
  });

  it.each<[string, OpenSubject]>([
    ['a failed run of another kind on the app', failedRun(5981, 1, 'app_update', 'update')],
    ['a failed upgrade run of another app', failedRun(5981, 2, 'app_upgrade', 'upgrade')],
    ['another check about the same run', { ...failedRun(5981, 1, 'app_upgrade', 'upgrade'), check: 'stuck_runs' }],
    ['an alert without details', { check: 'failed_runs', subject: { type: 'run', id: 5981 } }],
  ])('alerts on its own, after fold_wait, beside %s', (_name, reported) => {
    const { findings, folded } = detect([reported]);
    expect(folded).toBeUndefined();
    expect(findings).toMatchObject([{ fingerprint: 'upgrades/failed/30', holdForMs: WAIT }]);
    expect(findings[0]?.holdReason).toMatch(/^waiting up to \S+ \(checks\.upgrades\.fold_wait\) for failed_runs/);
  });

  it('alerts at once with fold_wait 0s; a standby upgrade never waits on a run', () => {
    expect(detect([], { fold_wait: 0 }).findings[0]).not.toHaveProperty('holdForMs');
    const standby = upgrades(maintenanceSnapshot([app({ upgrade: upgrade() })]), { ...options, fold_wait: WAIT });
    expect(standby.findings[0]?.holdForMs).toBe(DAY);
  });
});

describe('the next step', () => {
  it.each([
    ['failed', /^Read the app's upgrade log/],
    ['standby', /^Finish or cancel the upgrade/],
  ])('of an upgrade %s', (state, step) => {
    const [finding] = findingsOf([app({ upgrade: upgrade({ state }) })]);
    expect(presentationOf('upgrades')!.nextStep!(finding!)).toMatch(step);
  });
});

describe('checks.upgrades', () => {
  it.each([
    [
      '',
      {
        failed_states: ['failed'],
        standby_states: ['standby'],
        standby_max_duration: DAY,
        stuck_states: ['requested', 'testing'],
        stuck_max_duration: 6 * HOUR,
        run_words: ['upgrade'],
        fold_wait: 5 * MINUTE,
      },
    ],
    [
      'checks: { upgrades: { failed_states: [error], standby_states: [on_hold], standby_max_duration: 6h, stuck_states: [], stuck_max_duration: 1d, run_words: [app_upgrade, migrate], fold_wait: 0s } }',
      {
        failed_states: ['error'],
        standby_states: ['on_hold'],
        standby_max_duration: 6 * HOUR,
        stuck_states: [],
        stuck_max_duration: DAY,
        run_words: ['app_upgrade', 'migrate'],
        fold_wait: 0,
      },
    ],
    ['checks: { upgrades: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).upgrades).toEqual(expected && expect.objectContaining(expected));
  });

  it.each([
    ['checks: { upgrades: { failed_states: [] } }', 'must list at least one state'],
    ['checks: { upgrades: { standby_max_duration: soon } }', 'standby_max_duration'],
    ['checks: { upgrades: { standby: 1d } }', 'standby'],
    ['checks: { upgrades: { run_words: [""] } }', 'must not be empty'],
    ['checks: { upgrades: { fold_wait: later } }', 'fold_wait'],
  ])('refuses %s', (yaml, message) => {
    expect(() => checksOf(yaml)).toThrow(message);
  });
});

describe('what the maintenance job keeps for upgrades', () => {
  const records = {
    failed: inFull(app({ upgrade: upgrade({ state: 'failed' }) })),
    standby: inFull(app({ upgrade: upgrade() })),
    testing: inFull(app({ upgrade: upgrade({ state: 'testing' }) })),
    none: inFull(app()),
  };

  it.each([
    ['on', '', ['failed', 'standby', 'testing']],
    ['on, stuck upgrades not watched', 'checks: { upgrades: { stuck_states: [] } }', ['failed', 'standby']],
    ['off', 'checks: { upgrades: { enabled: false } }', []],
  ])('%s: keeps the apps whose upgrade failed, waits in standby or may be stuck', (_name, yaml, kept) => {
    expect(keptBy('maintenance', yaml, records)).toEqual(kept);
  });
});
