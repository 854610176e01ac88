import { describe, expect, it } from 'vitest';
import type { AppBackups } from '../../src/collectors/snapshot.js';
import { appState, appStateCheck } from '../../src/detectors/app-state.js';
import { detectorOptionsFromConfig, runDetectors } from '../../src/detectors/registry.js';
import { BAD_APP_STATES } from '../../src/config/state-words.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { appListItem, backupsSnapshot, checksOf, DAY, expectWellFormed, keptBy, NOW } from './fixtures.js';

const options = appStateCheck.config.parse({});

describe('appState', () => {
  it.each(Object.values(VOCABULARY.app).map((state) => [state, BAD_APP_STATES.includes(state)] as const))(
    'an app %s is reported: %s',
    (state, reported) => {
      const findings = appState(backupsSnapshot([appListItem({ id: 4, state })], []), options);
      expectWellFormed(findings);
      expect(findings.map((f) => f.fingerprint)).toEqual(reported ? ['app_state/app/4'] : []);
    },
  );

  it.each([
    ['production', 'critical'],
    ['staging', 'warning'],
    ['development', 'warning'],
    [null, 'warning'],
  ] as const)('an app in %s is %s', (environment_type, severity) => {
    const [finding] = appState(backupsSnapshot([appListItem({ state: 'error', environment_type })], []), options);
    expect(finding?.severity).toBe(severity);
  });

  it('names the app and its state, labelled and linked like the other app checks', () => {
    const [finding] = appState(backupsSnapshot([appListItem({ state: 'stopped' })], []), options);
    expect(finding).toEqual({
      fingerprint: 'app_state/app/1',
      check: 'app_state',
      severity: 'critical',
      summary: 'App shop-prod (production) is stopped',
      // When the app last changed: not shown, what its time to alert counts from.
      details: { app: 'shop-prod (production)', state: 'stopped', updated_at: new Date(NOW - DAY).toISOString() },
      labels: {
        check: 'app_state',
        namespace: 'acme',
        project: 'shop',
        environment_type: 'production',
        app: 'shop-prod',
        server: 'web-01',
      },
      url: 'https://shop.example.com',
      since: null,
      subject: { type: 'app', id: 1 },
    });
  });

  it('keeps one fingerprint while the state moves from one bad word to another', () => {
    const prints = ['error', 'stopped'].map(
      (state) => appState(backupsSnapshot([appListItem({ state })], []), options)[0]?.fingerprint,
    );
    expect(new Set(prints)).toEqual(new Set(['app_state/app/1']));
  });

  it('is presented with its state and a brief', () => {
    const { findings } = runDetectors(
      backupsSnapshot([appListItem({ state: 'error', last_backup_at: null })], []),
      { app_state: options },
      NOW,
    );
    expect(findings).toMatchObject([{ facts: [{ label: 'State', value: 'error' }], brief: 'state error' }]);
  });
});

describe('checks.app_state', () => {
  it.each([
    ['', ['error', 'stopped']],
    ['checks: { app_state: { bad_states: [failed, inactive] } }', ['failed', 'inactive']],
    ['checks: { app_state: { enabled: false } }', undefined],
  ] as const)('%j gives the detector the bad states %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).app_state?.bad_states).toEqual(expected);
  });

  it.each([
    ['checks: { app_state: { bad_states: [] } }', 'must list at least one state'],
    ['checks: { app_state: { bad_state: [error] } }', 'bad_state'],
  ])('refuses %s', (yaml, message) => {
    expect(() => checksOf(yaml)).toThrow(message);
  });
});

describe('what the backups job keeps for app_state', () => {
  /** Apps as the backups job meets them, none with a backup read. */
  const records: Record<string, AppBackups> = {
    // Development backups are not watched: only app_state can report this one.
    'error in development': { app: appListItem({ state: 'error', environment_type: 'development' }), seen: undefined },
    // A production app without a backup: only the backups check can report it.
    'running in production, no backup': { app: appListItem({ state: 'running' }), seen: undefined },
    'running in development': {
      app: appListItem({ state: 'running', environment_type: 'development' }),
      seen: undefined,
    },
  };

  it.each([
    ['both checks on', '', ['error in development', 'running in production, no backup']],
    ['backups off', 'checks: { backups: { enabled: false } }', ['error in development']],
    ['app_state off', 'checks: { app_state: { enabled: false } }', ['running in production, no backup']],
  ])('%s: keeps the apps a check could report', (_name, yaml, kept) => {
    expect(keptBy('backups', yaml, records)).toEqual(kept);
  });
});
