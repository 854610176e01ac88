import { describe, expect, it } from 'vitest';
import type { AppListItem, Backup, OffsiteCopy } from '../../src/api/schemas.js';
import type { BackupsSeen } from '../../src/collectors/snapshot.js';
import { backupOutcome, seeBackup, settledBy, type BackupOutcome } from '../../src/collectors/backups-seen.js';
import {
  backups,
  backupsConfig,
  judgeOffsite,
  type BackupsConfig,
  type OffsiteReason,
} from '../../src/detectors/backups.js';
import { VOCABULARY } from '../../packages/simulator/src/vocabulary.js';
import { FAILED_OFFSITE_STATES } from '../../src/config/state-words.js';
import {
  ago,
  appListItem,
  BACKUP_STATES,
  backup,
  backupsSnapshot,
  DAY,
  expectWellFormed,
  HOUR,
  NOW,
  offsiteCopy,
  resolutionOf,
} from './fixtures.js';
import { presentationOf } from '../../src/detectors/registry.js';

/** The defaults, but without an upload timeout or a size comparison (their rules are below). */
const options = backupsConfig.parse({ offsite_upload_timeout: 'off', size_drop: 'off' });
const { done, running, failed } = VOCABULARY.backup;
const prod = (o: Partial<AppListItem> = {}) => appListItem(o);
/** Backup #id of app 1 in `state`, taken `age` ago; verified and copied off-site unless said. */
const b = (id: number, state: string | null, age: number, o: Partial<Backup> = {}) =>
  backup({ id, state, taken_at: ago(age), ...o });
const run = (
  apps: AppListItem[],
  bs: Backup[],
  opts: BackupsConfig = options,
  stopped: Record<number, BackupsSeen['stopped']> = {},
) => {
  const result = backups(backupsSnapshot(apps, bs, stopped), opts, NOW);
  expectWellFormed(result.findings);
  return result;
};
const fps = (apps: AppListItem[], bs: Backup[], opts: BackupsConfig = options) =>
  run(apps, bs, opts).findings.map((f) => f.fingerprint);

describe('judgeOffsite', () => {
  it.each<[string, Partial<OffsiteCopy>, OffsiteReason | null]>([
    ['uploaded and there', {}, null],
    ['failed state', { state: VOCABULARY.offsite.failed, on_storage: false }, 'transfer_failed'],
    [
      'error set whatever the state',
      { state: VOCABULARY.offsite.uploaded, error: 'quota exceeded' },
      'transfer_failed',
    ],
    ['no longer on its storage', { on_storage: false, state: VOCABULARY.offsite.deleted }, 'not_on_storage'],
    [
      'never uploaded yet (upload under way)',
      { on_storage: false, state: VOCABULARY.offsite.uploading, uploaded_at: null },
      null,
    ],
  ])('%s', (_name, o, reason) => {
    expect(judgeOffsite(offsiteCopy(o), FAILED_OFFSITE_STATES)).toBe(reason);
  });
});

describe('backupOutcome', () => {
  it.each<[string, string | null, string | null, BackupOutcome]>([
    ['a succeeded state with a time', done, ago(HOUR), 'good'],
    ['a succeeded state without a time: nothing shows it is recent', done, null, 'unknown'],
    ['a running state', running, ago(HOUR), 'running'],
    ['a failed state, with or without a time', failed, null, 'failed'],
    ['a state in no list', 'queued', ago(HOUR), 'unknown'],
    ['a null state: not evidence of a good backup', null, ago(HOUR), 'unknown'],
  ])('%s', (_name, state, takenAt, outcome) => {
    expect(backupOutcome({ state, taken_at: takenAt }, BACKUP_STATES)).toBe(outcome);
  });

  it("reads the configured words, not the simulator's", () => {
    const states = { succeeded_states: ['completed'], running_states: ['in_progress'], failed_states: ['error'] };
    expect(
      [done, 'completed', 'in_progress', 'error'].map((state) => backupOutcome({ state, taken_at: ago(HOUR) }, states)),
    ).toEqual(['unknown', 'good', 'running', 'failed']);
  });
});

describe('seeBackup and settledBy', () => {
  const horizon = NOW - 26 * HOUR;
  /** Meets the backups in order until settled: the ids met, why it settled, and the three kept. */
  const walk = (bs: Backup[]) => {
    let seen: BackupsSeen | undefined;
    let why: ReturnType<typeof settledBy> = null;
    const met: number[] = [];
    for (const one of bs) {
      seen = seeBackup(seen, one, BACKUP_STATES);
      met.push(one.id);
      why = settledBy(seen, one, horizon);
      if (why) break;
    }
    return { met, why, newest: seen?.newest.id, finished: seen?.finished?.id, good: seen?.good?.id };
  };

  it.each<[string, Backup[], ReturnType<typeof walk>]>([
    [
      'a good newest settles at once',
      [b(3, done, HOUR), b(2, done, DAY)],
      { met: [3], why: 'good', newest: 3, finished: 3, good: 3 },
    ],
    [
      'running and failed ones are passed until the good one',
      [b(4, running, 0), b(3, failed, HOUR), b(2, done, DAY), b(1, done, 2 * DAY)],
      { met: [4, 3, 2], why: 'good', newest: 4, finished: 3, good: 2 },
    ],
    [
      'past max_age with a finished one known: a good one further down is stale anyway',
      [b(4, failed, HOUR), b(3, failed, 30 * HOUR), b(2, done, 3 * DAY)],
      { met: [4, 3], why: 'max_age', newest: 4, finished: 4, good: undefined },
    ],
    [
      'past max_age with nothing finished yet: reads on to the finished one, so a failed alert is judged on its backup',
      [b(4, running, 27 * HOUR), b(3, 'queued', 28 * HOUR), b(2, failed, 29 * HOUR), b(1, done, 3 * DAY)],
      { met: [4, 3, 2], why: 'max_age', newest: 4, finished: 2, good: undefined },
    ],
    [
      'unknown states are neither finished nor good',
      [b(3, null, HOUR), b(2, 'queued', 2 * HOUR)],
      { met: [3, 2], why: null, newest: 3, finished: undefined, good: undefined },
    ],
  ])('%s', (_name, bs, expected) => {
    expect(walk(bs)).toEqual(expected);
  });
});

describe('backups', () => {
  it.each<[string, AppListItem[], Backup[], string[]]>([
    ['fresh, verified, healthy, off-site fine', [prod()], [backup()], []],
    [
      'older than max_age',
      [prod({ last_backup_at: ago(30 * HOUR) })],
      [backup({ taken_at: ago(30 * HOUR) })],
      ['backups/app/1/stale'],
    ],
    [
      'exactly max_age old is not stale',
      [prod({ last_backup_at: ago(26 * HOUR) })],
      [backup({ taken_at: ago(26 * HOUR) })],
      [],
    ],
    ['no backup at all', [prod({ last_backup_at: null })], [], ['backups/app/1/stale']],
    [
      "the app's last_backup_at is no evidence of a good backup (it may be any backup's time)",
      [prod({ last_backup_at: ago(HOUR) })],
      [b(501, failed, HOUR), b(500, done, 3 * DAY)],
      ['backups/app/1/stale', 'backups/app/1/failed'],
    ],
    ['backup_health warning', [prod({ backup_health: 'warning' })], [backup()], ['backups/app/1/health']],
    ['backup_health critical', [prod({ backup_health: 'critical' })], [backup()], ['backups/app/1/health']],
    ['backup_health none is not a finding', [prod({ backup_health: 'none' })], [backup()], []],
    ['newest not verified', [prod()], [backup({ verified: false })], ['backups/app/1/unverified']],
    [
      'only the newest good backup counts',
      [prod()],
      [backup({ id: 501 }), backup({ id: 400, verified: false, taken_at: ago(DAY) })],
      [],
    ],
    [
      'off-site copy failed on one storage, fine on another',
      [prod()],
      [
        backup({
          offsite: [
            offsiteCopy({ storage: 'b2', state: 'failed', error: 'auth refused' }),
            offsiteCopy({ storage: 's3-eu' }),
          ],
        }),
      ],
      ['backups/app/1/offsite/b2'],
    ],
    [
      'off-site copy no longer on storage',
      [prod()],
      [backup({ offsite: [offsiteCopy({ on_storage: false })] })],
      ['backups/app/1/offsite/s3-eu'],
    ],
    [
      'every problem at once: one fingerprint each',
      [prod({ backup_health: 'critical', last_backup_at: ago(3 * DAY) })],
      [
        b(501, failed, HOUR),
        backup({ taken_at: ago(3 * DAY), verified: false, offsite: [offsiteCopy({ error: 'timeout' })] }),
      ],
      [
        'backups/app/1/stale',
        'backups/app/1/failed',
        'backups/app/1/health',
        'backups/app/1/unverified',
        'backups/app/1/offsite/s3-eu',
      ],
    ],
    [
      'max_age off: the environment is not watched at all',
      [
        prod({
          id: 3,
          name: 'shop-dev',
          environment_type: 'development',
          backup_health: 'critical',
          last_backup_at: null,
        }),
      ],
      [b(9, failed, HOUR, { app_id: 3 })],
      [],
    ],
    [
      'environment type absent from max_age: not watched',
      [prod({ id: 4, environment_type: null, last_backup_at: null })],
      [],
      [],
    ],
    [
      'staging has its own max_age',
      [prod({ id: 2, environment_type: 'staging', last_backup_at: ago(3 * DAY) })],
      [backup({ app_id: 2, taken_at: ago(3 * DAY) })],
      [],
    ],
  ])('%s', (_name, apps, bs, expected) => {
    expect(fps(apps, bs)).toEqual(expected);
  });

  // Each case: the app's backups newest first, and what the check reports of them.
  it.each<[string, Backup[], string[]]>([
    ['newest good and fresh', [b(502, done, HOUR), b(501, failed, 2 * HOUR)], []],
    [
      'newest failed after an old good one: stale stays, failed fires',
      [b(502, failed, 3 * HOUR), b(501, done, 3 * DAY)],
      ['stale', 'failed'],
    ],
    [
      'newest running after an old good one: stale stays, nothing unverified',
      [b(502, running, 5 * 60_000, { verified: false, offsite: [] }), b(501, done, 3 * DAY)],
      ['stale'],
    ],
    [
      'running after a fresh good unverified one: judged on the good one',
      [b(502, running, 5 * 60_000, { verified: false, offsite: [] }), b(501, done, 2 * HOUR, { verified: false })],
      ['unverified'],
    ],
    [
      'running after a fresh good verified one: nothing (the running one is not "not verified")',
      [b(502, running, 5 * 60_000, { verified: false, offsite: [] }), b(501, done, 2 * HOUR)],
      [],
    ],
    [
      'failed, then a newer good one: failed and stale both resolve',
      [b(503, done, HOUR), b(502, failed, 3 * HOUR), b(501, done, 3 * DAY)],
      [],
    ],
    [
      'a running retry on top of a failed one: still failed',
      [b(503, running, 60_000, { verified: false }), b(502, failed, HOUR), b(501, done, 2 * HOUR)],
      ['failed'],
    ],
    ['only failed backups', [b(502, failed, HOUR), b(501, failed, DAY)], ['stale', 'failed']],
    ['an unknown state is neither good nor failed', [b(502, 'queued', HOUR), b(501, done, 3 * DAY)], ['stale']],
    [
      'an unknown state does not resolve a failed one',
      [b(503, 'queued', HOUR), b(502, failed, 2 * HOUR), b(501, done, 3 * HOUR)],
      ['failed'],
    ],
    ['a null state does not count as taken (the safe reading)', [b(502, null, HOUR), b(501, done, 3 * DAY)], ['stale']],
    [
      'off-site judged on the good one: a failed copy of the good one below a running backup',
      [
        b(502, running, 60_000, { verified: false, offsite: [] }),
        b(501, done, 2 * HOUR, { offsite: [offsiteCopy({ storage: 'b2', error: 'timeout' })] }),
      ],
      ['offsite/b2'],
    ],
    [
      "off-site judged on the good one: a newer failed backup's copies are not",
      [b(502, failed, HOUR, { offsite: [offsiteCopy({ storage: 'b2', error: 'timeout' })] }), b(501, done, 2 * HOUR)],
      ['failed'],
    ],
  ])('state: %s', (_name, bs, expected) => {
    expect(fps([prod()], bs)).toEqual(expected.map((p) => `backups/app/1/${p}`));
  });

  it.each<[string, 'max_age' | 'bound', Backup[], string[], string[]]>([
    [
      'read stopped past max_age: stale known, the good one unread',
      'max_age',
      [b(502, failed, HOUR), b(501, failed, 30 * HOUR)],
      ['stale', 'failed'],
      ['unverified', 'offsite/', 'no_offsite', 'lost', 'size'],
    ],
    [
      'read stopped by its bound with a failed one met: failed known, the rest unknown',
      'bound',
      [b(502, running, 60_000), b(501, failed, HOUR)],
      ['failed'],
      ['stale', 'unverified', 'offsite/', 'no_offsite', 'lost', 'size'],
    ],
    [
      'read stopped by its bound with nothing finished met',
      'bound',
      [b(502, running, 60_000), b(501, 'queued', HOUR)],
      [],
      ['stale', 'failed', 'unverified', 'offsite/', 'no_offsite', 'lost', 'size'],
    ],
    [
      'a good one met before the bound: nothing unknown',
      'bound',
      [b(502, failed, HOUR), b(501, done, 2 * HOUR)],
      ['failed'],
      [],
    ],
  ])('%s', (_name, stopped, bs, expected, unknown) => {
    const result = run([prod()], bs, options, { 1: stopped });
    expect(result.findings.map((f) => f.fingerprint)).toEqual(expected.map((p) => `backups/app/1/${p}`));
    expect(result.incomplete).toEqual(unknown.map((p) => `backups/app/1/${p}`));
  });

  it('says in the stale alert when the newest backup is in a state the config does not name, and where it goes', () => {
    const [stale] = run([prod()], [b(502, 'success', HOUR), b(501, done, 3 * DAY)]).findings;
    expect(stale!.summary).toMatch(/; newest: #502 success 1h ago \(a state checks\.backups does not name\)$/);
    expect(stale!.details.unknown_state).toBe(
      '"success" is in none of checks.backups.succeeded_states, running_states or failed_states',
    );
    const [known] = run([prod()], [b(502, failed, HOUR), b(501, done, 3 * DAY)]).findings;
    expect(known!.details.unknown_state).toBeUndefined();
  });

  it('does not watch apps outside any environment (max_age names environment types only)', () => {
    const app = prod({ id: 4, environment_type: null, last_backup_at: null });
    expect(fps([app], [])).toEqual([]);
  });

  it('does not report unverified backups unless asked, nor off-site copies without offsite options', () => {
    const one = backup({ verified: false, offsite: [offsiteCopy({ on_storage: false })] });
    expect(fps([prod()], [one], { ...options, require_verified: false, offsite: false })).toEqual([]);
  });

  it('says how old the newest good backup is and since when that is too old', () => {
    const [finding] = run([prod({ last_backup_at: ago(30 * HOUR) })], [backup({ taken_at: ago(30 * HOUR) })]).findings;
    expect(finding).toMatchObject({
      severity: 'critical',
      summary: 'No successful backup of shop-prod (production) for 1d 6h (max 1d 2h)',
      since: ago(4 * HOUR),
      subject: { type: 'app', id: 1 },
      url: 'https://shop.example.com',
    });
    expect(finding?.details).toEqual({
      app: 'shop-prod (production)',
      max_age: '1d 2h',
      age: '1d 6h',
      taken_at: ago(30 * HOUR),
      backup: 'shop-prod-2026-11-01 (#500)',
    });
    expect(finding?.labels).toEqual({
      check: 'backups',
      namespace: 'acme',
      project: 'shop',
      environment_type: 'production',
      app: 'shop-prod',
      server: 'web-01',
      problem: 'stale',
    });
  });

  it.each<[string, Backup[], BackupsSeen['stopped'] | undefined, string]>([
    ['no backup', [], undefined, 'shop-prod (production) has no backup'],
    [
      'an old good one under a failed one',
      [b(501, failed, 3 * HOUR, { name: 'shop-prod-b' }), b(500, done, 2 * DAY)],
      undefined,
      'No successful backup of shop-prod (production) for 2d (max 1d 2h); newest: #501 failed 3h ago',
    ],
    [
      'only failed ones, read to the end',
      [b(501, failed, 3 * HOUR)],
      undefined,
      'shop-prod (production) has no successful backup; newest: #501 failed 3h ago',
    ],
    [
      'read stopped past max_age',
      [b(502, running, 60_000), b(501, failed, 3 * HOUR), b(500, failed, 27 * HOUR)],
      'max_age',
      'No successful backup of shop-prod (production) within 1d 2h; newest: #502 running 1m ago',
    ],
    [
      'newest without a state',
      [b(502, null, HOUR), b(500, done, 2 * DAY)],
      undefined,
      'No successful backup of shop-prod (production) for 2d (max 1d 2h); newest: #502 (no state) 1h ago',
    ],
    [
      'off-site failed',
      [backup({ offsite: [offsiteCopy({ storage: 'b2', state: 'failed', error: 'auth refused' })] })],
      undefined,
      'Off-site copy of the newest successful backup of shop-prod (production) on b2 failed: auth refused',
    ],
    [
      'off-site gone',
      [backup({ offsite: [offsiteCopy({ storage: 'b2', on_storage: false })] })],
      undefined,
      'Off-site copy of the newest successful backup of shop-prod (production) is no longer on b2',
    ],
    [
      'unverified',
      [backup({ verified: false })],
      undefined,
      'Newest successful backup of shop-prod (production) is not verified (shop-prod-2026-11-01)',
    ],
  ])('summary: %s', (_name, bs, stopped, summary) => {
    const app = prod({ last_backup_at: bs.length ? ago(HOUR) : null });
    expect(run([app], bs, options, stopped ? { 1: stopped } : {}).findings[0]?.summary).toBe(summary);
  });

  it('details of a stale alert carry the newest good backup and, when another, the newest one and its state', () => {
    const [stale] = run([prod()], [b(501, failed, 3 * HOUR, { name: 'shop-prod-b' }), b(500, done, 2 * DAY)]).findings;
    expect(stale?.details).toMatchObject({
      backup: 'shop-prod-2026-11-01 (#500)',
      taken_at: ago(2 * DAY),
      newest_backup: 'shop-prod-b (#501): failed, taken 3h ago',
    });
  });

  it('names the failed backup, its time and state, and points the finding at it', () => {
    const findings = run(
      [prod()],
      [b(501, failed, 3 * HOUR, { name: 'shop-prod-b' }), b(500, done, 2 * HOUR)],
    ).findings;
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({
      fingerprint: 'backups/app/1/failed',
      severity: 'critical',
      summary: 'Newest finished backup of shop-prod (production) failed: shop-prod-b (#501, failed, taken 3h ago)',
      since: ago(3 * HOUR),
      subject: { type: 'backup', id: 501 },
      labels: { check: 'backups', app: 'shop-prod', environment_type: 'production', problem: 'failed' },
    });
    expect(findings[0]?.details).toMatchObject({
      backup: 'shop-prod-b (#501)',
      backup_state: 'failed',
      taken_at: ago(3 * HOUR),
      newest_successful_backup: 'shop-prod-2026-11-01 (#500), taken 2h ago',
    });
  });

  it.each<[string, AppListItem, string]>([
    ['production', prod(), 'critical'],
    ['staging', prod({ id: 2, environment_type: 'staging' }), 'warning'],
  ])('severity of stale and failed in %s: %s', (_name, app, expected) => {
    const bs = [b(501, failed, HOUR, { app_id: app.id }), b(500, done, 9 * DAY, { app_id: app.id })];
    const findings = run([app], bs).findings;
    expect(findings.map((f) => [f.labels.problem, f.severity])).toEqual([
      ['stale', expected],
      ['failed', expected],
    ]);
  });

  it('labels an off-site finding with its storage and points it at the backup', () => {
    const one = backup({ offsite: [offsiteCopy({ storage: 'b2', on_storage: false })] });
    const [finding] = run([prod()], [one]).findings;
    expect(finding?.labels).toMatchObject({ problem: 'offsite', storage: 'b2' });
    expect(finding?.subject).toEqual({ type: 'backup', id: 500 });
    expect(finding?.details).toMatchObject({ storage: 'b2', on_storage: 'no', reason: 'not_on_storage' });
  });

  it('keeps the health fingerprint when health goes from warning to critical', () => {
    const warn = run([prod({ backup_health: 'warning' })], [backup()]).findings;
    const crit = run([prod({ backup_health: 'critical' })], [backup()]).findings;
    expect([warn[0]?.severity, crit[0]?.severity]).toEqual(['warning', 'critical']);
    expect(crit[0]?.fingerprint).toBe(warn[0]?.fingerprint);
  });
});

/**
 * The rules of issue 22, each a table with the resolution it gives: only a full backup counts as
 * taken; an empty or shrunken backup; a good backup without any off-site copy, or with an upload
 * that never ended.
 */
describe('backups: format, size and off-site rules', () => {
  const FULL = { ...BACKUP_STATES, full_formats: ['zip'] };
  const all = backupsConfig.parse({});
  /** The app's backups read as the collector reads them (full formats, four sizes of history). */
  const snap = (bs: Backup[]) => backupsSnapshot([prod()], bs, {}, { states: FULL, history: 4 });
  const judge = (bs: Backup[], o: Partial<BackupsConfig> = {}) => {
    const { findings } = backups(snap(bs), { ...all, ...o }, NOW);
    expectWellFormed(findings);
    return findings;
  };
  /** Daily good zips of `sizes` MB, the newest first, the newest taken an hour ago. */
  const daily = (sizes: number[], o: Partial<Backup> = {}) =>
    sizes.map((size_mb, i) => b(600 - i, done, HOUR + i * DAY, { size_mb, ...o }));
  const resolution = (finding: Parameters<typeof resolutionOf>[0], bs: Backup[]) =>
    resolutionOf(finding, snap(bs), { backups: all });

  it.each<[string, Backup[], string[], string | null]>([
    ['a fresh zip', daily([100]), [], null],
    [
      'a fresh dump over a zip two days old: stale, the dump named',
      [b(601, done, HOUR, { format: 'dump' }), ...daily([100]).map((x) => ({ ...x, taken_at: ago(2 * DAY) }))],
      ['stale'],
      'No successful backup of shop-prod (production) for 2d (max 1d 2h); newest: #601 done 1h ago (format dump: not a full backup)',
    ],
    [
      'only dumps: no successful backup',
      [b(601, done, HOUR, { format: 'dump' })],
      ['stale'],
      'shop-prod (production) has no successful backup; newest: #601 done 1h ago (format dump: not a full backup)',
    ],
    [
      'a format the config does not name is not full either',
      [b(601, done, HOUR, { format: 'tar' })],
      ['stale'],
      'shop-prod (production) has no successful backup; newest: #601 done 1h ago (format tar: not a full backup)',
    ],
    ['a null format counts as full (documented)', [b(601, done, HOUR, { format: null })], [], null],
    [
      'a failed zip under a good dump stays failed',
      [
        b(602, done, HOUR, { format: 'dump' }),
        b(601, failed, 2 * HOUR),
        ...daily([100]).map((x) => ({ ...x, taken_at: ago(3 * HOUR) })),
      ],
      ['failed'],
      null,
    ],
  ])('format: %s', (_name, bs, problems, summary) => {
    const findings = judge(bs).filter((f) => f.labels.problem !== 'health');
    expect(findings.map((f) => f.labels.problem)).toEqual(problems);
    if (summary) expect(findings[0]?.summary).toBe(summary);
    // Over once a full backup is taken: the resolution names it.
    if (problems[0] === 'stale')
      expect(resolution(findings[0]!, [b(700, done, 0, { name: 'shop-prod-now.zip' }), ...bs])).toBe(
        'backup shop-prod-now.zip taken 2026-11-01 12:00 UTC, verified',
      );
  });

  it.each<[string, Backup[], Partial<BackupsConfig>, { severity: string; summary: string } | null]>([
    ['steady sizes', daily([100, 98, 97, 95, 94]), {}, null],
    ['growing', daily([150, 100, 100, 100, 100]), {}, null],
    ['just at half the median', daily([50, 100, 100, 100, 100]), {}, null],
    [
      'under half the median',
      daily([40, 100, 98, 102, 10]),
      {},
      {
        severity: 'warning',
        summary:
          'Newest successful backup of shop-prod (production) shrank to 40% of its usual size: shop-prod-2026-11-01 (40 MB, usually 99 MB)',
      },
    ],
    [
      'empty: critical in production, history or not',
      daily([0]),
      {},
      {
        severity: 'critical',
        summary: 'Newest successful backup of shop-prod (production) is empty: shop-prod-2026-11-01 (0 MB)',
      },
    ],
    ['one earlier size only: too little to compare', daily([10, 100]), {}, null],
    ['sizes unknown', daily([40, 100, 100]).map((x, i) => (i === 0 ? x : { ...x, size_mb: null })), {}, null],
    [
      'size_drop off: an empty one still',
      daily([0, 100, 100]),
      { size_drop: null },
      {
        severity: 'critical',
        summary: 'Newest successful backup of shop-prod (production) is empty: shop-prod-2026-11-01 (0 MB)',
      },
    ],
    ['size_drop off: a shrink is not judged', daily([10, 100, 100]), { size_drop: null }, null],
    [
      'a dump in between is not history',
      [
        ...daily([40]),
        b(599, done, 2 * HOUR, { format: 'dump', size_mb: 5 }),
        ...daily([100, 100, 100]).map((x) => ({ ...x, id: x.id - 10 })),
      ],
      {},
      {
        severity: 'warning',
        summary:
          'Newest successful backup of shop-prod (production) shrank to 40% of its usual size: shop-prod-2026-11-01 (40 MB, usually 100 MB)',
      },
    ],
  ])('size: %s', (_name, bs, o, expected) => {
    const findings = judge(bs, o).filter((f) => f.labels.problem === 'size');
    if (expected === null) return void expect(findings).toEqual([]);
    expect(findings).toMatchObject([
      { fingerprint: 'backups/app/1/size', ...expected, subject: { type: 'backup', id: 600 } },
    ]);
    expect(presentationOf('backups')!.nextStep!(findings[0]!)).toMatch(/^Open the backup/);
    expect(
      resolution(
        findings[0]!,
        daily([101, ...bs.map(() => 100)]).map((x, i) => ({ ...x, id: 700 - i })),
      ),
    ).toBe('backup shop-prod-2026-11-01 taken 2026-11-01 11:00 UTC: 101 MB');
  });

  it.each<[string, Backup, Partial<BackupsConfig>, string | null, string | null]>([
    ['copied', b(600, done, HOUR), {}, null, null],
    [
      'no off-site copy at all',
      b(600, done, HOUR, { offsite: [] }),
      {},
      'no_offsite',
      'Newest successful backup of shop-prod (production) has no off-site copy (shop-prod-2026-11-01)',
    ],
    ['no copy, offsite_required false', b(600, done, HOUR, { offsite: [] }), { offsite_required: false }, null, null],
    [
      'an upload under way for an hour',
      b(600, done, HOUR, { offsite: [offsiteCopy({ on_storage: false, state: 'uploading', uploaded_at: null })] }),
      {},
      null,
      null,
    ],
    [
      'an upload without uploaded_at for 8h: stuck',
      b(600, done, 8 * HOUR, { offsite: [offsiteCopy({ on_storage: false, state: 'uploading', uploaded_at: null })] }),
      {},
      'offsite',
      'Off-site copy of the newest successful backup of shop-prod (production) on s3-eu is not uploaded 8h after the backup',
    ],
    [
      'stuck, offsite_upload_timeout off',
      b(600, done, 8 * HOUR, { offsite: [offsiteCopy({ on_storage: false, state: 'uploading', uploaded_at: null })] }),
      { offsite_upload_timeout: null },
      null,
      null,
    ],
  ])('off-site: %s', (_name, one, o, problem, summary) => {
    const findings = judge([one], o).filter((f) => f.labels.problem !== 'health');
    if (problem === null) return void expect(findings).toEqual([]);
    expect(findings).toMatchObject([
      { severity: 'warning', summary, labels: { problem }, subject: { type: 'backup', id: 600 } },
    ]);
    expect(resolution(findings[0]!, [b(700, done, 0, { name: 'shop-prod-now.zip' })])).toBe(
      'backup shop-prod-now.zip taken 2026-11-01 12:00 UTC: off-site copies stored',
    );
  });
});
