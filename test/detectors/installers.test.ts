import { describe, expect, it } from 'vitest';
import type { Installer } from '../../src/api/schemas.js';
import { BAD_INSTALLER_STATES, STOPPED_INSTALLER_STATES } from '../../src/config/state-words.js';
import { installers, installersConfig, type InstallersConfig } from '../../src/detectors/installers.js';
import { detectorOptionsFromConfig, presentationOf, runDetectors } from '../../src/detectors/registry.js';
import { formatDuration } from '../../src/lib/format-duration.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { checksOf, expectWellFormed, HOUR, installer, installersSnapshot, NOW, resolutionOf } from './fixtures.js';

const options = installersConfig.parse({ stopped_for: '1h' });
const findingsOf = (o: Partial<Installer>) => installers(installersSnapshot([installer(o)]), options);

describe('installers', () => {
  it.each(
    Object.values(VOCABULARY.installer).map(
      (state) => [state, BAD_INSTALLER_STATES.includes(state) || STOPPED_INSTALLER_STATES.includes(state)] as const,
    ),
  )('a service %s is reported: %s', (state, reported) => {
    const findings = findingsOf({ state });
    expectWellFormed(findings);
    expect(findings.map((f) => f.fingerprint)).toEqual(reported ? ['installers/installer/60'] : []);
  });

  // The rule "a stopped service is alerted once it has stayed stopped for stopped_for", with the
  // resolution that says it runs again.
  it.each<[string, Partial<InstallersConfig>, number | null]>([
    ['default: held an hour', {}, HOUR],
    ['stopped_for 0s: at once', { stopped_for: 0 }, 0],
    ['stopped_states empty: never', { stopped_states: [] }, null],
  ])('a stopped service: %s', (_name, o, hold) => {
    const opts = { ...options, ...o };
    const findings = installers(installersSnapshot([installer({ state: 'stopped' })]), opts);
    if (hold === null) return void expect(findings).toEqual([]);
    expect(findings).toMatchObject([
      {
        fingerprint: 'installers/installer/60',
        severity: 'warning',
        holdForMs: hold,
        summary: `Marketplace service postgres-60 (postgres of shop-prod) has been stopped for more than ${formatDuration(hold)}`,
        labels: { problem: 'stopped', server: 'web-01' },
      },
    ]);
    expect(presentationOf('installers')!.nextStep!(findings[0]!)).toMatch(/^Start the service again/);
    const running = installersSnapshot([installer({ state: 'running' })]);
    expect(resolutionOf(findings[0]!, running, { installers: opts })).toBe('the service is running now');
  });

  it('names the service, its type and its app, labelled by its server so a bad server holds it', () => {
    expect(findingsOf({ state: 'error' })).toEqual([
      {
        fingerprint: 'installers/installer/60',
        check: 'installers',
        severity: 'warning',
        summary: 'Marketplace service postgres-60 (postgres of shop-prod) is error',
        details: { state: 'error', type: 'postgres', app: 'shop-prod', server: 'web-01' },
        labels: {
          check: 'installers',
          namespace: 'acme',
          app: 'shop-prod',
          server: 'web-01',
          installer: 'postgres-60',
          type: 'postgres',
        },
        url: 'https://postgres-60.acme.svc.example.com',
        since: null,
        subject: { type: 'installer', id: 60 },
      },
    ]);
  });

  it.each<[string, Partial<Installer>, string, Record<string, string>]>([
    [
      'without an app or a server',
      { app: null, server: null, url: null },
      'Marketplace service postgres-60 (postgres) is error',
      { state: 'error', type: 'postgres' },
    ],
    [
      'on a server, serving no app',
      { app: null },
      'Marketplace service postgres-60 (postgres) is error',
      { state: 'error', type: 'postgres', server: 'web-01' },
    ],
  ])('a service %s says only what it knows', (_name, o, summary, details) => {
    const [finding] = findingsOf({ state: 'error', ...o });
    expect(finding).toMatchObject({ summary, details });
    expect(Object.keys(finding!.details)).toEqual(Object.keys(details));
  });

  it('is presented with its state, type, app and server, and a brief', () => {
    const { findings } = runDetectors(
      installersSnapshot([installer({ state: 'error' })]),
      { installers: options },
      NOW,
    );
    expect(findings).toMatchObject([
      {
        facts: [
          { label: 'State', value: 'error' },
          { label: 'Type', value: 'postgres' },
          { label: 'App', value: 'shop-prod' },
          { label: 'Server', value: 'web-01' },
        ],
        brief: 'state error',
      },
    ]);
  });
});

describe('checks.installers', () => {
  it.each([
    ['', { bad_states: ['error'], stopped_states: ['stopped'], stopped_for: HOUR }],
    [
      'checks: { installers: { bad_states: [failed, stopped], stopped_states: [], stopped_for: 2h } }',
      { bad_states: ['failed', 'stopped'], stopped_states: [], stopped_for: 2 * HOUR },
    ],
    ['checks: { installers: { enabled: false } }', undefined],
  ] as const)('%j gives the options %j', (yaml, expected) => {
    expect(detectorOptionsFromConfig(checksOf(yaml)).installers).toEqual(expected && expect.objectContaining(expected));
  });

  it.each([
    ['checks: { installers: { bad_states: [] } }', 'must list at least one state'],
    ['checks: { installers: { states: [error] } }', 'states'],
  ])('refuses %s', (yaml, message) => {
    expect(() => checksOf(yaml)).toThrow(message);
  });
});
