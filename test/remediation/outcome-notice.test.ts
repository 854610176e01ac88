/** The words people read: outcome titles, the notice, and the suspension alert. */
import { describe, expect, it } from 'vitest';
import { appsBackup } from '../../src/remediation/actions/apps-backup.js';
import { runsRetry } from '../../src/remediation/actions/runs-retry.js';
import {
  JOINED_LINE,
  startedNotice,
  outcomeNotice,
  outcomeTitle,
  outcomeWord,
  suspensionFinding,
  type AttemptOutcome,
} from '../../src/remediation/outcome-notice.js';
import type { AttemptRow } from '../../src/remediation/remediation-store.js';
import type { BackupReading } from '../../src/remediation/backup-readback.js';

describe('outcomeTitle', () => {
  it.each<[string, AttemptOutcome, string]>([
    ['retry succeeded', { kind: 'succeeded' }, 'Retried automatically: succeeded'],
    [
      'retry failed at a step',
      { kind: 'run_failed', step: 'install', reason: 'pip failed', watcher: null },
      'Retried automatically: failed at step install: pip failed',
    ],
    [
      'retry failed on the watcher',
      { kind: 'run_failed', step: null, reason: 'no report', watcher: 'timeout' },
      'Retried automatically: failed on the server (watcher timeout): no report',
    ],
    ['not retryable', { kind: 'stopped', code: 'not_retryable', message: 'x' }, 'Not retryable: stopped'],
    [
      'follow timeout',
      { kind: 'follow_timeout', afterMs: 7_200_000 },
      'Retried automatically: outcome unknown, still running after 2h',
    ],
    [
      'refused as malformed',
      { kind: 'failed_request', code: 'invalid_parameter', message: 'x' },
      'Automatic retry refused: invalid_parameter',
    ],
  ])('%s', (_what, outcome, title) => {
    expect(outcomeTitle(runsRetry.words, outcome)).toBe(title);
  });

  it('speaks of backups for apps.backup', () => {
    expect(outcomeTitle(appsBackup.words, { kind: 'succeeded' })).toBe('Backup taken automatically');
    expect(
      outcomeTitle(appsBackup.words, { kind: 'run_failed', step: null, reason: 'disk full', watcher: 'failed' }),
    ).toBe('Automatic backup failed on the server (watcher failed): disk full');
  });
});

describe('a backup read back', () => {
  const reading = (over: Partial<BackupReading> = {}): BackupReading => ({
    id: 812,
    name: 'shop.zip',
    state: 'done',
    failed: false,
    verified: true,
    copies: [{ storage: 's3-eu', state: 'stored', error: null }],
    settled: true,
    ...over,
  });
  const pending = { storage: 'b2', state: 'pending', error: null } as const;
  it.each<[string, BackupReading, string, string]>([
    ['verified and copied', reading(), 'succeeded', 'backup shop.zip (#812) verified; copied off-site to s3-eu'],
    [
      'not verified in the window',
      reading({ verified: false, settled: false }),
      'backup_unverified',
      'backup shop.zip (#812) not verified within 30m; copied off-site to s3-eu',
    ],
    [
      'a copy failed, another stored',
      reading({ copies: [...reading().copies, { storage: 'b2', state: 'failed', error: 'quota' }] }),
      'backup_offsite_failed',
      'backup shop.zip (#812) verified; copied off-site to s3-eu; off-site copy to b2 failed: quota',
    ],
    [
      'a copy still uploading',
      reading({ copies: [pending], settled: false }),
      'backup_not_offsite',
      'backup shop.zip (#812) verified; off-site copy to b2 not uploaded within 30m',
    ],
    [
      'no copy at all',
      reading({ copies: [], settled: false }),
      'backup_not_offsite',
      'backup shop.zip (#812) verified; no off-site copy within 30m',
    ],
  ])('%s', (_what, r, word, text) => {
    const outcome: AttemptOutcome = { kind: 'backup_read', reading: r, windowMs: 30 * 60_000 };
    expect(outcomeWord(outcome)).toBe(word);
    expect(outcomeTitle(appsBackup.words, outcome)).toBe(`Backup taken automatically: ${text}`);
  });

  it('a backup that ended failed says so', () => {
    const outcome: AttemptOutcome = {
      kind: 'backup_read',
      reading: reading({ state: 'failed', failed: true }),
      windowMs: 0,
    };
    expect(outcomeWord(outcome)).toBe('backup_failed');
    expect(outcomeTitle(appsBackup.words, outcome)).toBe(
      'Automatic backup failed: backup shop.zip (#812) ended failed',
    );
  });
});

describe('outcomeNotice', () => {
  it('names the app, record, run, policy and key, links the alert and says which alert it is about', () => {
    const attempt = {
      policy: 'retry-staging',
      action: 'runs.retry',
      recordType: 'run',
      recordId: 9,
      attempt: 1,
      key: 'dw-retry-staging-run9-a1',
      labels: { check: 'failed_runs', app: 'shop', environment_type: 'staging' },
      severity: 'warning',
      summary: 'Update of shop failed',
      url: 'https://shop.example.com',
      runId: 9,
      fingerprint: 'failed_runs/run/9',
    } as AttemptRow;
    expect(outcomeNotice(attempt, runsRetry.words, { kind: 'succeeded' })).toEqual({
      type: 'notice',
      topic: 'remediation',
      title: 'Retried automatically: succeeded',
      severity: 'ok',
      fields: [
        { label: 'App', value: 'shop (staging)' },
        { label: 'Record', value: 'run #9' },
        { label: 'Run', value: '#9' },
        { label: 'Policy', value: 'retry-staging (runs.retry, attempt 1)' },
        { label: 'Idempotency key', value: 'dw-retry-staging-run9-a1' },
      ],
      lines: ['Alert: Update of shop failed'],
      url: 'https://shop.example.com',
      fingerprint: 'failed_runs/run/9',
    });
  });
});

describe('startedNotice', () => {
  const attempt = (answer: string) =>
    ({ policy: 'p', action: 'runs.retry', attempt: 1, summary: 'Update failed', runId: 9, answer }) as AttemptRow;

  it('says the run it follows, and whether it was already under way, started by someone else', () => {
    expect(startedNotice(attempt('started'), runsRetry.words)).toMatchObject({
      title: 'Automatic retry: sent, following run #9',
      lines: ['Alert: Update failed'],
    });
    expect(startedNotice(attempt('already_running'), runsRetry.words)).toMatchObject({
      title: 'Automatic retry: sent, run #9 was already under way: following it',
      lines: ['Alert: Update failed', JOINED_LINE],
    });
  });
});

describe('suspensionFinding', () => {
  const base = { policy: 'retry-nonprod', action: 'runs.retry', message: 'no', at: 0 };
  it.each([
    [
      'a whole policy: the fingerprint and labels it always had',
      { ...base, code: 'writes_disabled', scope: { kind: 'policy' } },
      {
        fingerprint: 'watchdog/remediation/retry-nonprod',
        labels: { check: 'watchdog', source: 'remediation', policy: 'retry-nonprod' },
        summary: 'Remediation policy retry-nonprod suspended: the service refused runs.retry with writes_disabled',
      },
    ],
    [
      'one environment: named in the summary and an `environment` label (not environment_type: routed as a watchdog alert)',
      { ...base, code: 'access_denied', scope: { kind: 'environment', environment: 'development' } },
      {
        fingerprint: 'watchdog/remediation/retry-nonprod/environment/development',
        labels: { check: 'watchdog', source: 'remediation', policy: 'retry-nonprod', environment: 'development' },
        details: { environment: 'development', code: 'access_denied' },
        summary:
          'Remediation policy retry-nonprod paused for development: the service refused runs.retry with access_denied',
      },
    ],
    [
      'apps outside any environment: a scope of their own',
      { ...base, code: 'access_denied', scope: { kind: 'environment', environment: null } },
      {
        fingerprint: 'watchdog/remediation/retry-nonprod/no-environment',
        labels: { check: 'watchdog', source: 'remediation', policy: 'retry-nonprod', environment: 'none' },
        summary:
          'Remediation policy retry-nonprod paused for apps outside any environment: the service refused runs.retry with access_denied',
      },
    ],
  ] as const)('%s', (_what, suspension, expected) => {
    const f = suspensionFinding(suspension);
    expect(f).toMatchObject({ check: 'watchdog', severity: 'warning', ...expected });
    expect(f.labels).toEqual(expected.labels);
    expect(f.labels.environment_type).toBeUndefined();
  });
});
