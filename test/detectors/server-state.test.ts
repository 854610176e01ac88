import { describe, expect, it } from 'vitest';
import type { EnvironmentType } from '../../src/api/schemas.js';
import type { Snapshot } from '../../src/collectors/snapshot.js';
import type { Severity } from '../../src/lib/alert-vocabulary.js';
import type { Finding } from '../../src/detectors/finding.js';
import { runDetectors, type DetectorOptions } from '../../src/detectors/registry.js';
import { serverState, serversCheck } from '../../src/detectors/server-state.js';
import { Inhibitor } from '../../src/notify/inhibition.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { BAD_SERVER_STATES, FAILED_RUN_STATES } from '../../src/config/state-words.js';
import {
  app,
  appListItem,
  backupsSnapshot,
  expectWellFormed,
  maintenanceSnapshot,
  NOW,
  optionsOf,
  run,
  runsSnapshot,
  server,
  serversSnapshot,
  urlRecord,
  urlsSnapshot,
} from './fixtures.js';

const options = serversCheck.config.parse({});

describe('serverState', () => {
  it.each(Object.values(VOCABULARY.server).map((state) => [state, BAD_SERVER_STATES.includes(state)] as const))(
    'a server %s is reported: %s',
    (state, reported) => {
      const findings = serverState(serversSnapshot([server({ state })]), options);
      expectWellFormed(findings);
      expect(findings.map((f) => f.fingerprint)).toEqual(reported ? ['servers/server/7'] : []);
    },
  );

  it('takes its state words from the options, not the simulator', () => {
    const snapshot = serversSnapshot([server({ id: 1, state: 'down' }), server({ id: 2, state: 'error' })]);
    expect(serverState(snapshot, { ...options, bad_states: ['down'] }).map((f) => f.fingerprint)).toEqual([
      'servers/server/1',
    ]);
    expect(serverState(snapshot, { ...options, bad_states: [] })).toEqual([]);
  });

  it('names the server, its state and how many apps it carries, critical, labelled by the server name', () => {
    const [finding] = serverState(serversSnapshot([server({ state: 'unreachable' })]), options);
    expect(finding).toEqual({
      fingerprint: 'servers/server/7',
      check: 'servers',
      severity: 'critical',
      summary: 'Server web-01 is unreachable (12 apps on it)',
      details: { provider: 'hetzner', region: 'fsn1', public_ip: '203.0.113.7', app_count: '12' },
      labels: { check: 'servers', namespace: 'acme', server: 'web-01' },
      url: null,
      since: null,
      subject: { type: 'server', id: 7 },
    });
  });

  it.each([
    [0, '0 apps'],
    [1, '1 app'],
    [2, '2 apps'],
  ])('counts %i apps as "%s" and leaves unknown details out', (count, words) => {
    const bare = server({ state: 'error', app_count: count, provider: null, region: null, public_ip: null });
    const [finding] = serverState(serversSnapshot([bare]), options);
    expect(finding?.summary).toBe(`Server web-01 is error (${words} on it)`);
    expect(finding?.details).toEqual({ app_count: String(count) });
  });

  it('keeps one fingerprint while the state changes from one bad word to another', () => {
    const states = ['error', 'unreachable', 'stopped'];
    const prints = states.map((state) => serverState(serversSnapshot([server({ state })]), options)[0]?.fingerprint);
    expect(new Set(prints)).toEqual(new Set(['servers/server/7']));
  });
});

describe('a server pages like the apps on it', () => {
  type Envs = (EnvironmentType | null)[] | undefined;
  it.each<[string, number, Envs, string | undefined, Severity, string, string | undefined]>([
    ['development apps', 2, ['development', 'development'], undefined, 'warning', '(2 apps on it)', 'development'],
    [
      'a production app among others',
      3,
      ['staging', 'production', 'development'],
      undefined,
      'critical',
      '(3 apps on it, 1 in production)',
      'production',
    ],
    [
      'staging and apps outside any environment',
      2,
      [null, 'staging'],
      undefined,
      'warning',
      '(2 apps on it)',
      'staging',
    ],
    ['apps outside any environment alone', 1, [null], undefined, 'warning', '(1 app on it)', undefined],
    ['no app', 0, undefined, undefined, 'warning', '(0 apps on it)', undefined],
    ['apps not listed', 12, undefined, undefined, 'critical', '(12 apps on it)', undefined],
    [
      'apps the token may not list',
      12,
      undefined,
      'apps.list answered function_not_allowed',
      'critical',
      '(12 apps on it)',
      undefined,
    ],
  ])('%s: %s… is %s', (_name, count, envs, unread, severity, words, environment) => {
    const bad = server({ state: 'error', app_count: count });
    const snapshot = serversSnapshot([bad], new Map(envs ? [[bad.id, envs]] : []), unread);
    const [finding] = serverState(snapshot, options);
    expect(finding?.severity).toBe(severity);
    expect(finding?.summary).toBe(`Server web-01 is error ${words}`);
    expect(finding?.labels.environment_type).toBe(environment);
  });

  it('says how many apps of each environment it carries, or why that is unknown', () => {
    const bad = server({ state: 'error', app_count: 4 });
    const envs: (EnvironmentType | null)[] = ['staging', 'production', null, 'production'];
    const [known] = runDetectors(serversSnapshot([bad], new Map([[bad.id, envs]])), { servers: options }, NOW).findings;
    expect(known?.details.environments).toBe('production 2, staging 1, none 1');
    expect(known?.facts).toContainEqual({ label: 'Apps by environment', value: 'production 2, staging 1, none 1' });
    const [unknown] = serverState(serversSnapshot([bad], new Map(), 'apps.list answered access_denied'), options);
    expect(unknown?.details.environments).toBe('unknown (apps.list answered access_denied)');
  });
});

describe('the server label of app findings matches the server finding (bad_servers inhibition)', () => {
  // Every app detector, each given one problem on an app that runs on server "web-01".
  const { failed_runs, stuck_runs, certificates, url_checks, backups } = optionsOf('');
  const all: DetectorOptions = {
    failed_runs,
    stuck_runs,
    certificates,
    url_checks,
    backups,
    maintenance: optionsOf('checks: { maintenance: { max_duration: 1h } }').maintenance,
    servers: options,
  };
  const appSnapshots: [string, Snapshot][] = [
    ['runs', runsSnapshot([run({ id: 1, state: FAILED_RUN_STATES[0]! })])],
    ['urls', urlsSnapshot([urlRecord({ ssl_status: 'expired', public_check: 'failed' })])],
    ['backups', backupsSnapshot([appListItem({ last_backup_at: null })], [])],
    ['maintenance', maintenanceSnapshot([app({ maintenance: true })])],
  ];
  const [cause] = runDetectors(serversSnapshot([server({ state: 'error' })]), all, NOW).findings as [Finding];
  const inhibitor = new Inhibitor({ bad_servers: true, api_unreadable: true, app_maintenance: true, app_down: true }, [
    { ...cause, status: 'firing', firedAt: NOW },
  ]);

  it.each(appSnapshots)('every finding of the %s job is held under the server alert', (_job, snapshot) => {
    const { findings } = runDetectors(snapshot, all, NOW);
    expect(findings.length).toBeGreaterThan(0);
    for (const finding of findings) {
      expect(finding.labels.server, finding.fingerprint).toBe('web-01');
      expect(inhibitor.causeFor(finding), finding.fingerprint).toEqual({
        rule: 'bad_servers',
        fingerprint: 'servers/server/7',
        summary: cause.summary,
      });
    }
  });

  it('does not hold the server alert itself', () => {
    expect(inhibitor.causeFor(cause)).toBeUndefined();
  });
});
