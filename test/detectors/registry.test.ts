import { describe, expect, it } from 'vitest';
import type { Snapshot, SnapshotJob } from '../../src/collectors/snapshot.js';
import { configSchema } from '../../src/config/config-schema.js';
import {
  CHECK_NAMES,
  detectorsFor,
  presentationOf,
  relevanceFor,
  runDetectors,
  type DetectorOptions,
} from '../../src/detectors/registry.js';
import {
  ACTIVE_RUN_STATES,
  BAD_APP_STATES,
  BAD_INSTALLER_STATES,
  BAD_SERVER_STATES,
  FAILED_RUN_STATES,
  FAILED_UPGRADE_STATES,
} from '../../src/config/state-words.js';
import {
  ago,
  app,
  appListItem,
  attentionSnapshot,
  backupsSnapshot,
  DAY,
  expectWellFormed,
  resolutionOf,
  HOUR,
  installer,
  installersSnapshot,
  maintenanceSnapshot,
  NOW,
  optionsOf,
  repository,
  restorePoint,
  run,
  runsSnapshot,
  section,
  server,
  serversSnapshot,
  upgrade,
  urlRecord,
  urlsSnapshot,
} from './fixtures.js';

/** Every check on: the defaults, but every attention item and failed upgrade at once. */
const all = optionsOf(`checks:
  attention: { min_severity: info, fold_wait: 0s }
  maintenance: { max_duration: 1h }
  repository_checks: { enabled: true }
  upgrades: { fold_wait: 0s }
  restore_points: { enabled: true }`) as Required<DetectorOptions>;

/** One snapshot per job, each with something for every detector of that job to find. */
const snapshots: Record<SnapshotJob, Snapshot> = {
  runs: runsSnapshot([
    run({ id: 1, state: FAILED_RUN_STATES[0]! }),
    run({ id: 2, action: 'restart', state: ACTIVE_RUN_STATES[0]!, created_at: ago(3 * HOUR) }),
  ]),
  urls: urlsSnapshot([urlRecord({ ssl_status: 'expired', public_check: 'failed' })]),
  backups: backupsSnapshot([appListItem({ last_backup_at: null, state: BAD_APP_STATES[0]! })], []),
  attention: attentionSnapshot([section({ items: [{ id: 1 }] })]),
  maintenance: maintenanceSnapshot(
    [
      app({
        maintenance: true,
        repositories: [
          repository({ deleted_upstream: true }),
          repository({ repository: 'oca-addons', checked_at: ago(3 * DAY) }),
        ],
        upgrade: upgrade({ state: FAILED_UPGRADE_STATES[0]! }),
      }),
    ],
    new Map([[1, [restorePoint({ held: true })]]]),
  ),
  servers: serversSnapshot([server({ state: BAD_SERVER_STATES[0]! })]),
  installers: installersSnapshot([installer({ state: BAD_INSTALLER_STATES[0]! })]),
};

describe('registry', () => {
  it('registers every check but watchdog exactly once', () => {
    const jobs = Object.keys(snapshots) as SnapshotJob[];
    const checks = jobs.flatMap((job) => detectorsFor(job).map((d) => d.name));
    expect([...checks].sort()).toEqual(CHECK_NAMES.filter((c) => c !== 'watchdog').sort());
  });

  it.each<[SnapshotJob, string[]]>([
    ['runs', ['failed_runs', 'stuck_runs']],
    ['urls', ['certificates', 'url_checks']],
    ['backups', ['backups', 'app_state']],
    ['attention', ['attention']],
    ['maintenance', ['maintenance', 'branches', 'repository_checks', 'upgrades', 'restore_points']],
    ['servers', ['servers']],
    ['installers', ['installers']],
  ])('the %s job runs %j', (job, checks) => {
    expect(detectorsFor(job).map((d) => d.name)).toEqual(checks);
    const { findings } = runDetectors(snapshots[job], all, NOW);
    expectWellFormed(findings);
    expect([...new Set(findings.map((f) => f.check))]).toEqual(checks);
  });

  it('skips a check whose options are absent (disabled)', () => {
    const { stuck_runs: _off, ...rest } = all;
    const { findings } = runDetectors(snapshots.runs, rest, NOW);
    expect(findings.map((f) => f.check)).toEqual(['failed_runs']);
    expect(runDetectors(snapshots.urls, {}, NOW)).toEqual({ findings: [], incomplete: [] });
  });

  it('is pure: the same input gives the same findings', () => {
    for (const snapshot of Object.values(snapshots)) {
      expect(runDetectors(snapshot, all, NOW)).toEqual(runDetectors(snapshot, all, NOW));
    }
  });

  it("never finds anything in another job's snapshot", () => {
    const detector = detectorsFor('urls')[0]!;
    expect(detector.run(snapshots.backups, all, NOW + DAY)).toEqual({ findings: [], incomplete: [] });
  });

  it('hands on every finding presented by its check: its facts and brief', () => {
    for (const snapshot of Object.values(snapshots)) {
      for (const f of runDetectors(snapshot, all, NOW).findings) {
        const presentation = presentationOf(f.check)!;
        expect(f.facts, f.fingerprint).toEqual(presentation.facts(f));
        expect(f.brief, f.fingerprint).toBe(presentation.brief?.(f.details) ?? undefined);
      }
    }
  });

  it("explains an alert's end only in its own check's job's snapshot", () => {
    const [finding] = runDetectors(snapshots.maintenance, all, NOW).findings.filter((f) => f.check === 'maintenance');
    // The app's maintenance is over in a later read of the maintenance job, not in any other job's.
    const over = maintenanceSnapshot([app({ id: finding!.subject!.id!, maintenance: false })]);
    expect(resolutionOf(finding!, over, all)).toBe('maintenance mode switched off');
    expect(resolutionOf(finding!, snapshots.urls, all)).toBeNull();
    expect(resolutionOf({ ...finding!, check: 'no_such_check' }, over, all)).toBeNull();
  });

  it('tests the records of the jobs whose checks declare what they keep of a bulk read', () => {
    expect(Object.keys(relevanceFor(all, NOW)).sort()).toEqual(['backups', 'maintenance', 'urls']);
  });

  it("gives the config's checks section one key per check, and sources", () => {
    const checks = configSchema.shape.checks.unwrap().shape;
    expect(Object.keys(checks)).toEqual([...CHECK_NAMES.filter((c) => c !== 'watchdog'), 'sources']);
  });
});
