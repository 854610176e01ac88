import { describe, expect, it } from 'vitest';
import type { App, AppUpgrade, EnvironmentType } from '../../src/api/schemas.js';
import { FAILED_UPGRADE_STATES, STANDBY_UPGRADE_STATES } from '../../src/config/state-words.js';
import { detectorOptionsFromConfig, presentationOf, runDetectors } from '../../src/detectors/registry.js';
import { upgrades, type UpgradesOptions } from '../../src/detectors/upgrades.js';
import { VOCABULARY } from '../../src/simulator/vocabulary.js';
import {
  app,
  checksOf,
  DAY,
  expectWellFormed,
  HOUR,
  inFull,
  keptBy,
  maintenanceSnapshot,
  NOW,
  upgrade,
} from './fixtures.js';

const options: UpgradesOptions = {
  failedStates: FAILED_UPGRADE_STATES,
  standbyStates: STANDBY_UPGRADE_STATES,
  standbyMaxMs: DAY,
};

const findingsOf = (apps: App[], o: UpgradesOptions = options) => upgrades(maintenanceSnapshot(apps), o);

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
    const [finding] = findingsOf([app({ upgrade: upgrade() })], { ...options, standbyMaxMs: 12 * HOUR });
    expect(finding).toMatchObject({
      severity: 'warning',
      holdForMs: 12 * HOUR,
      summary:
        "Upgrade of shop-prod (production) from 18.0 to 19.0 has waited in standby for more than 12h: the app's restarts and updates are refused until it moves on",
      details: { max_duration: '12h' },
    });
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
    ['', { failedStates: ['failed'], standbyStates: ['standby'], standbyMaxMs: DAY }],
    [
      'checks: { upgrades: { failed_states: [error], standby_states: [on_hold], standby_max_duration: 6h } }',
      { failedStates: ['error'], standbyStates: ['on_hold'], standbyMaxMs: 6 * HOUR },
    ],
    ['checks: { upgrades: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).upgrades).toEqual(expected);
  });

  it.each([
    ['checks: { upgrades: { failed_states: [] } }', 'must list at least one state'],
    ['checks: { upgrades: { standby_max_duration: soon } }', 'standby_max_duration'],
    ['checks: { upgrades: { standby: 1d } }', 'standby'],
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
    ['on', '', ['failed', 'standby']],
    ['off', 'checks: { upgrades: { enabled: false } }', []],
  ])('%s: keeps the apps whose upgrade failed or waits in standby', (_name, yaml, kept) => {
    expect(keptBy('maintenance', yaml, records)).toEqual(kept);
  });
});
