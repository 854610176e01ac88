import { describe, expect, it } from 'vitest';
import { CHECKS, detectorOptionsFromConfig, extraReadsFor } from '../../src/detectors/registry.js';
import { checksOf } from './fixtures.js';

describe('detectorOptionsFromConfig', () => {
  it('hands every enabled check its section with the defaults, the state words and durations in ms', () => {
    const options = detectorOptionsFromConfig(checksOf(''));
    expect(Object.keys(options).sort()).toEqual([
      'app_state',
      'attention',
      'backups',
      'branches',
      'certificates',
      'failed_runs',
      'installers',
      'maintenance',
      'servers',
      'stuck_runs',
      'upgrades',
      'url_checks',
    ]);
    expect(options.failed_runs).toMatchObject({
      failed_states: ['error'],
      active_states: ['queued', 'running'],
      retrying_grace: 30 * 60_000,
      succeeded_states: ['done'],
    });
    expect(options.stuck_runs).toEqual({
      enabled: true,
      active_states: ['queued', 'running'],
      max_duration: 2 * 3_600_000,
    });
    // The section as parsed: its defaults are load-config's to test.
    expect(options.backups).toEqual(checksOf('').backups);
    expect(options.attention).toEqual({
      enabled: true,
      min_severity: 'warning',
      ignore_rules: [],
      fold_wait: 20 * 60_000,
      reported_by: {},
    });
    expect(options.servers).toMatchObject({ bad_states: ['error', 'unreachable', 'stopped'] });
    expect(options.repository_checks).toBeUndefined();
    expect(
      detectorOptionsFromConfig(checksOf('checks: { repository_checks: { enabled: true } }')).repository_checks,
    ).toEqual({ enabled: true, max_age: 2 * 24 * 3_600_000 });
  });

  it('runs every check by default but restore_points (a request per app) and repository_checks (a cadence not documented)', () => {
    const options = detectorOptionsFromConfig(checksOf(''));
    expect(CHECKS.map((c) => c.name).filter((name) => !(name in options))).toEqual([
      'repository_checks',
      'restore_points',
    ]);
    expect(detectorOptionsFromConfig(checksOf('checks: { restore_points: { enabled: true } }')).restore_points).toEqual(
      { enabled: true },
    );
  });

  it.each([
    ['', []],
    ['checks: { restore_points: { enabled: true } }', ['restore_points']],
  ])('%j asks the collectors for the extra reads %j (restore_points: one more request per app)', (yaml, reads) => {
    expect([...extraReadsFor(detectorOptionsFromConfig(checksOf(yaml)))]).toEqual(reads);
  });

  it.each([
    ['failed_runs', 'checks: { failed_runs: { enabled: false } }'],
    ['certificates', 'checks: { certificates: { enabled: false } }'],
    ['maintenance', 'checks: { maintenance: { enabled: false } }'],
    ['servers', 'checks: { servers: { enabled: false } }'],
  ] as const)('leaves out %s when it is disabled', (check, yaml) => {
    const options = detectorOptionsFromConfig(checksOf(yaml));
    expect(options[check]).toBeUndefined();
    expect(Object.keys(options)).toHaveLength(Object.keys(detectorOptionsFromConfig(checksOf(''))).length - 1);
  });

  it('passes attention.ignore_rules on as given', () => {
    const options = detectorOptionsFromConfig(
      checksOf('checks: { attention: { ignore_rules: [failed_run, maintenance] } }'),
    );
    expect(options.attention?.ignore_rules).toEqual(['failed_run', 'maintenance']);
  });

  it('takes the operator’s own state words and leaves off-site checks out when off', () => {
    const options = detectorOptionsFromConfig(
      checksOf(
        'checks:\n  failed_runs: { failed_states: [failed, crashed] }\n  stuck_runs: { active_states: [busy] }\n  backups: { offsite: false, succeeded_states: [completed, verified], running_states: [in_progress], failed_states: [error] }\n  servers: { bad_states: [down] }',
      ),
    );
    expect(options.failed_runs).toMatchObject({ failed_states: ['failed', 'crashed'], active_states: ['busy'] });
    expect(options.servers).toMatchObject({ bad_states: ['down'] });
    expect(options.backups).toMatchObject({
      offsite: false,
      succeeded_states: ['completed', 'verified'],
      running_states: ['in_progress'],
      failed_states: ['error'],
    });
  });
});
