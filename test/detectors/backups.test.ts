import { describe, expect, it } from 'vitest';
import type { AppListItem, Backup, OffsiteCopy } from '../../src/api/schemas.js';
import { backups, judgeOffsite, type BackupsOptions, type OffsiteReason } from '../../src/detectors/backups.js';
import { FAILED_OFFSITE_STATES, VOCABULARY } from '../../src/simulator/vocabulary.js';
import { ago, appListItem, backup, backupsSnapshot, DAY, expectWellFormed, HOUR, NOW, offsiteCopy } from './fixtures.js';

const options: BackupsOptions = {
  maxAgeMs: { production: 26 * HOUR, staging: 8 * DAY, development: null },
  requireVerified: true,
  offsite: { failedStates: FAILED_OFFSITE_STATES },
};
const prod = (o: Partial<AppListItem> = {}) => appListItem(o);
const fps = (apps: AppListItem[], bs: Backup[], opts: BackupsOptions = options) => {
  const findings = backups(backupsSnapshot(apps, bs), opts, NOW);
  expectWellFormed(findings);
  return findings.map((f) => f.fingerprint);
};

describe('judgeOffsite', () => {
  it.each<[string, Partial<OffsiteCopy>, OffsiteReason | null]>([
    ['uploaded and there', {}, null],
    ['failed state', { state: VOCABULARY.offsite.failed, on_storage: false }, 'transfer_failed'],
    ['error set whatever the state', { state: VOCABULARY.offsite.uploaded, error: 'quota exceeded' }, 'transfer_failed'],
    ['no longer on its storage', { on_storage: false, state: VOCABULARY.offsite.deleted }, 'not_on_storage'],
    ['never uploaded yet (upload under way)', { on_storage: false, state: VOCABULARY.offsite.uploading, uploaded_at: null }, null],
  ])('%s', (_name, o, reason) => {
    expect(judgeOffsite(offsiteCopy(o), FAILED_OFFSITE_STATES)).toBe(reason);
  });
});

describe('backups', () => {
  it.each<[string, AppListItem[], Backup[], string[]]>([
    ['fresh, verified, healthy, off-site fine', [prod()], [backup()], []],
    ['older than max_age', [prod({ last_backup_at: ago(30 * HOUR) })], [backup({ taken_at: ago(30 * HOUR) })], ['backups/app/1/stale']],
    ['exactly max_age old is not stale', [prod({ last_backup_at: ago(26 * HOUR) })], [backup({ taken_at: ago(26 * HOUR) })], []],
    ['no backup at all', [prod({ last_backup_at: null })], [], ['backups/app/1/stale']],
    [
      'app last_backup_at newer than the backup record (still running) counts',
      [prod({ last_backup_at: ago(HOUR) })],
      [backup({ taken_at: null })],
      [],
    ],
    ['backup_health warning', [prod({ backup_health: 'warning' })], [backup()], ['backups/app/1/health']],
    ['backup_health critical', [prod({ backup_health: 'critical' })], [backup()], ['backups/app/1/health']],
    ['backup_health none is not a finding', [prod({ backup_health: 'none' })], [backup()], []],
    ['newest not verified', [prod()], [backup({ verified: false })], ['backups/app/1/unverified']],
    [
      'only the newest backup counts',
      [prod()],
      [backup({ id: 501 }), backup({ id: 400, verified: false, taken_at: ago(DAY) })],
      [],
    ],
    [
      'off-site copy failed on one storage, fine on another',
      [prod()],
      [backup({ offsite: [offsiteCopy({ storage: 'b2', state: 'failed', error: 'auth refused' }), offsiteCopy({ storage: 's3-eu' })] })],
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
      [backup({ taken_at: ago(3 * DAY), verified: false, offsite: [offsiteCopy({ error: 'timeout' })] })],
      ['backups/app/1/stale', 'backups/app/1/health', 'backups/app/1/unverified', 'backups/app/1/offsite/s3-eu'],
    ],
    [
      'max_age off: the environment is not watched at all',
      [prod({ id: 3, name: 'shop-dev', environment_type: 'development', backup_health: 'critical', last_backup_at: null })],
      [],
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

  it('watches apps outside any environment when `none` has a max_age', () => {
    const app = prod({ id: 4, environment_type: null, last_backup_at: null });
    expect(fps([app], [], { ...options, maxAgeMs: { none: DAY } })).toEqual(['backups/app/4/stale']);
  });

  it('does not report unverified backups unless asked, nor off-site copies without offsite options', () => {
    const b = backup({ verified: false, offsite: [offsiteCopy({ on_storage: false })] });
    expect(fps([prod()], [b], { maxAgeMs: options.maxAgeMs, requireVerified: false })).toEqual([]);
  });

  it('says how old the newest backup is and since when that is too old', () => {
    const [finding] = backups(backupsSnapshot([prod({ last_backup_at: ago(30 * HOUR) })], [backup({ taken_at: ago(30 * HOUR) })]), options, NOW);
    expect(finding).toMatchObject({
      severity: 'critical',
      summary: 'Newest backup of shop-prod (production) is 1d 6h old (max 1d 2h)',
      since: ago(4 * HOUR),
      subject: { type: 'app', id: 1 },
      url: 'https://shop.example.com',
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

  it.each<[string, Backup[], string]>([
    ['no backup', [], 'shop-prod (production) has no backup'],
    [
      'off-site failed',
      [backup({ offsite: [offsiteCopy({ storage: 'b2', state: 'failed', error: 'auth refused' })] })],
      'Off-site copy of the newest backup of shop-prod (production) on b2 failed: auth refused',
    ],
    [
      'off-site gone',
      [backup({ offsite: [offsiteCopy({ storage: 'b2', on_storage: false })] })],
      'Off-site copy of the newest backup of shop-prod (production) is no longer on b2',
    ],
    ['unverified', [backup({ verified: false })], 'Newest backup of shop-prod (production) is not verified (shop-prod-2026-11-01)'],
  ])('summary: %s', (_name, bs, summary) => {
    const app = prod({ last_backup_at: bs.length ? ago(HOUR) : null });
    expect(backups(backupsSnapshot([app], bs), options, NOW)[0]?.summary).toBe(summary);
  });

  it('labels an off-site finding with its storage and points it at the backup', () => {
    const b = backup({ offsite: [offsiteCopy({ storage: 'b2', on_storage: false })] });
    const [finding] = backups(backupsSnapshot([prod()], [b]), options, NOW);
    expect(finding?.labels).toMatchObject({ problem: 'offsite', storage: 'b2' });
    expect(finding?.subject).toEqual({ type: 'backup', id: 500 });
    expect(finding?.details).toMatchObject({ storage: 'b2', on_storage: 'no', reason: 'not_on_storage' });
  });

  it('keeps the health fingerprint when health goes from warning to critical', () => {
    const warn = backups(backupsSnapshot([prod({ backup_health: 'warning' })], [backup()]), options, NOW);
    const crit = backups(backupsSnapshot([prod({ backup_health: 'critical' })], [backup()]), options, NOW);
    expect([warn[0]?.severity, crit[0]?.severity]).toEqual(['warning', 'critical']);
    expect(crit[0]?.fingerprint).toBe(warn[0]?.fingerprint);
  });

  it('is a warning for a stale backup outside production by default', () => {
    const app = prod({ id: 2, environment_type: 'staging', last_backup_at: ago(10 * DAY) });
    expect(backups(backupsSnapshot([app], [backup({ app_id: 2, taken_at: ago(10 * DAY) })]), options, NOW)[0]?.severity).toBe('warning');
  });
});
