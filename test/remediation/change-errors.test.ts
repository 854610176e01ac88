/**
 * Every change error of the reference answered as specified, against the simulator: the first
 * request gets the error (an injected fault, or the simulator's own refusal), then time passes
 * beyond the backoff and the next cycle shows what followed: the same key again, a new key, or
 * nothing at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/api/schemas.js';
import { JOINED_LINE } from '../../src/remediation/outcome-notice.js';
import { appOf, Harness, MINUTE } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const SECTION = `
enabled: true
dry_run: false
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging }, max_attempts: 3, backoff: 10m }
`;

/** A failed update run of a staging app, failed at its check. */
const failedStagingRun = () =>
  h.sim.control.addRun({ appId: appOf(h.sim, 'staging'), action: 'update', state: 'error', failedStep: 'check' });

/** A failed run whose alert a cycle planned a retry for, then retried by hand before that retry was sent. */
async function retriedByHandAfterCycle() {
  h = await Harness.start(SECTION);
  const run = failedStagingRun();
  await h.cycle({ runs: [run.id] });
  await h.client.runs.retry(run.id, {}, { idempotencyKey: 'by-hand' });
  return run;
}

/** What follows an answer, after the backoff. */
type Next = 'same key again' | 'new key' | 'nothing';

interface Row {
  code: ErrorCode;
  /** The first attempt after its answer. */
  first: { status: 'planned' | 'finished'; outcome?: string | null; counted?: boolean };
  next: Next;
  notice?: string;
  /** Suspended: the whole policy, or (access_denied) the policy in the app's environment. */
  suspended?: 'policy' | 'environment';
}

const TABLE: Row[] = [
  // The service will retry by itself: wait for it.
  { code: 'retry_coming', first: { status: 'finished', outcome: 'retry_coming', counted: false }, next: 'new key' },
  // Stop, and say so in the alert's channels.
  {
    code: 'not_retryable',
    first: { status: 'finished', outcome: 'not_retryable', counted: false },
    next: 'nothing',
    notice: 'Not retryable: stopped',
  },
  {
    code: 'not_found',
    first: { status: 'finished', outcome: 'not_found', counted: false },
    next: 'nothing',
    notice: 'Not found: stopped',
  },
  // Try again later: refused, nothing changed, a later attempt with a new key.
  { code: 'in_progress', first: { status: 'finished', outcome: 'in_progress', counted: false }, next: 'new key' },
  { code: 'locked', first: { status: 'finished', outcome: 'locked', counted: false }, next: 'new key' },
  { code: 'rate_limited', first: { status: 'finished', outcome: 'rate_limited', counted: false }, next: 'new key' },
  // The first request of the key is still being handled: the same key, whose answer will be replayed.
  { code: 'request_in_progress', first: { status: 'planned' }, next: 'same key again' },
  // No answer we can trust: the same key again.
  { code: 'internal_error', first: { status: 'planned' }, next: 'same key again' },
  { code: 'unavailable', first: { status: 'planned' }, next: 'same key again' },
  // Only a person can fix these: suspend the policy (access_denied: in the app's environment), raise one alert.
  {
    code: 'writes_disabled',
    first: { status: 'finished', outcome: 'suspended', counted: false },
    next: 'nothing',
    suspended: 'policy',
  },
  {
    code: 'plan_required',
    first: { status: 'finished', outcome: 'suspended', counted: false },
    next: 'nothing',
    suspended: 'policy',
  },
  {
    code: 'function_not_allowed',
    first: { status: 'finished', outcome: 'suspended', counted: false },
    next: 'nothing',
    suspended: 'environment',
  },
  {
    code: 'access_denied',
    first: { status: 'finished', outcome: 'suspended', counted: false },
    next: 'nothing',
    suspended: 'environment',
  },
  // A malformed request: said, closed, and a later attempt may follow.
  {
    code: 'invalid_parameter',
    first: { status: 'finished', outcome: 'failed_request', counted: false },
    next: 'new key',
    notice: 'Automatic retry refused: invalid_parameter',
  },
];

describe('every change error', () => {
  it.each(TABLE)('$code → $next', async (row) => {
    h = await Harness.start(SECTION);
    const run = failedStagingRun();
    const key = (n: number) => `dw-${h.installation}.${n}-retry-staging-run${run.id}-a${n}`;
    h.sim.control.setFault('runs.retry', { errorCode: row.code, times: 1 });

    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toMatchObject([{ key: key(1) }]);
    expect(h.attempts()).toMatchObject([{ attempt: 1, ...row.first }]);
    expect(h.audit().find((a) => a.decision === 'answered')).toMatchObject({ answer: row.code, key: key(1) });

    h.clock.advance(11 * MINUTE);
    const { cycle } = await h.cycleAndPass({ runs: [run.id] });
    const keys = h.changes('runs.retry').map((c) => c.key);
    const expected = { 'same key again': [key(1), key(1)], 'new key': [key(1), key(2)], nothing: [key(1)] }[row.next];
    expect(keys).toEqual(expected);
    if (row.next !== 'nothing') expect(h.changes('runs.retry').at(-1)?.status).toBe(200);

    expect(h.notices().map((n) => n.notice.title)).toEqual(row.notice ? [row.notice] : []);
    if (row.suspended) {
      const whole = row.suspended === 'policy';
      expect(cycle.skipped).toEqual(whole ? { policy_suspended: 1 } : { environment_paused: 1 });
      const alerts = h.openAlerts().filter((a) => a.check === 'watchdog');
      expect(alerts).toMatchObject([
        {
          fingerprint: whole
            ? 'watchdog/remediation/retry-staging'
            : 'watchdog/remediation/retry-staging/environment/staging',
          status: 'firing',
          labels: {
            check: 'watchdog',
            source: 'remediation',
            policy: 'retry-staging',
            ...(whole ? {} : { environment: 'staging' }),
          },
          details: { code: row.code },
        },
      ]);
      expect(await h.metric({ policy: 'retry-staging', action: 'runs.retry', outcome: 'failed' })).toBe(1);
    } else {
      expect(h.openAlerts().filter((a) => a.check === 'watchdog')).toEqual([]);
    }
    if (row.next === 'nothing' && !row.suspended) expect(cycle.skipped).toEqual({ stopped: 1 });
  });
});

describe('refusals the simulator makes by itself', () => {
  it('already_running: the run was retried by hand meanwhile; follow it to its outcome, not stop', async () => {
    const run = await retriedByHandAfterCycle();
    // The run is under way again: the service joins the policy's retry to it (reference §3.3).
    await h.pass();
    expect(h.attempts()).toMatchObject([{ status: 'following', answer: 'already_running', runId: run.id }]);
    h.clock.advance(10 * MINUTE);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ status: 'finished', outcome: 'succeeded' }]);
    expect(h.notices().map((n) => [n.notice.title, n.notice.lines?.at(-1)])).toEqual([
      ['Retried automatically: succeeded', JOINED_LINE],
    ]);
  });

  it('idempotency_key_reused after a 5xx that changed nothing: the run never moved, so no retry is claimed', async () => {
    h = await Harness.start(SECTION);
    const run = failedStagingRun();
    h.sim.control.setFault('runs.retry', { errorCode: 'internal_error', times: 1 });
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.attempts()).toMatchObject([{ status: 'planned', sendCount: 1 }]);
    // The same key again: the reference answers any reused key so (§7.3), taken or not.
    h.sim.control.setFault('runs.retry', { errorCode: 'idempotency_key_reused', times: 1 });
    h.clock.advance(2 * MINUTE);
    await h.pass();
    expect(h.changes('runs.retry').map((c) => c.status)).toEqual([500, 422]);
    expect(h.attempts()).toMatchObject([{ status: 'finished', outcome: 'unverified' }]);
    expect(h.notices().map((n) => n.notice.title)).toEqual([
      'Automatic retry: the service said this request was sent before (idempotency_key_reused), but no run shows it was made',
    ]);
  });

  it('not_retryable: the run succeeded meanwhile; stop and say so', async () => {
    await retriedByHandAfterCycle();
    h.clock.advance(10 * MINUTE);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ outcome: 'not_retryable' }]);
    expect(h.notices()).toMatchObject([
      {
        channel: 'ops-log',
        notice: {
          title: 'Not retryable: stopped',
          lines: [expect.stringContaining('Alert:'), expect.stringContaining('not in error'), expect.any(String)],
        },
      },
    ]);
  });

  it('writes_disabled: one alert for the policy however many records, resolved when the remediator starts again', async () => {
    h = await Harness.start(SECTION);
    const a = h.sim.control.addRun({
      appId: appOf(h.sim, 'staging'),
      action: 'update',
      state: 'error',
      failedStep: 'check',
    });
    h.sim.control.setWritesDisabled(true);
    await h.cycleAndPass({ runs: [a.id] });
    expect(h.audit().filter((r) => r.decision === 'suspended')).toMatchObject([
      { reason: 'writes_disabled: suspended in every environment', environment: 'staging' },
    ]);

    // Another failure of the same policy: skipped, no second alert, no request.
    const b = h.sim.control.addRun({
      appId: appOf(h.sim, 'staging'),
      action: 'update_modules',
      state: 'error',
      failedStep: 'check',
    });
    const { cycle } = await h.cycleAndPass({ runs: [a.id, b.id] });
    expect(cycle.skipped).toEqual({ policy_suspended: 2 });
    expect(h.changes('runs.retry')).toHaveLength(1);
    const watchdog = () => h.openAlerts().filter((x) => x.check === 'watchdog');
    expect(watchdog()).toHaveLength(1);
    const firing = h.store.db
      .prepare(
        `SELECT COUNT(*) AS n FROM events WHERE fingerprint = 'watchdog/remediation/retry-staging' AND kind = 'firing'`,
      )
      .get() as { n: number };
    expect(firing.n).toBe(1);

    // A restart (or reload) lifts the suspension: the alert resolves and the policy acts again.
    h.sim.control.setWritesDisabled(false);
    await h.close({ keepDir: true });
    h = h.restart(SECTION);
    h.remediator.start();
    await h.remediator.stop(0);
    expect(watchdog()).toEqual([]);
    expect(h.audit().at(-1)).toMatchObject({ decision: 'resumed', policy: 'retry-staging', answer: 'writes_disabled' });
    h.clock.advance(11 * MINUTE);
    await h.cycleAndPass({ runs: [a.id, b.id] });
    expect(h.changes('runs.retry').filter((c) => c.status === 200)).toHaveLength(2);
  });

  it('locked: try again later with a new key', async () => {
    h = await Harness.start(SECTION);
    const appId = appOf(h.sim, 'staging');
    const run = h.sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'check' });
    h.sim.control.setLocked(appId, true);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.attempts()).toMatchObject([{ outcome: 'locked', counted: false }]);
    h.sim.control.setLocked(appId, false);
    h.clock.advance(11 * MINUTE);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toEqual([
      { key: `dw-${h.installation}.1-retry-staging-run${run.id}-a1`, status: 423 },
      { key: `dw-${h.installation}.2-retry-staging-run${run.id}-a2`, status: 200 },
    ]);
  });

  it('apps.backup, idempotency_key_reused: finds the backup run the earlier request started and follows it', async () => {
    h = await Harness.start(`
enabled: true
dry_run: false
policies:
  - { name: backup-prod, action: apps.backup, match: { environment_type: production } }
`);
    const appId = appOf(h.sim, 'production');
    h.sim.control.checks.backups.age(appId, { hours: 48 });
    await h.cycle({ backupApps: [appId] });
    // The earlier request was taken (its backup run is under way), but its answer was lost.
    const earlier = await h.client.apps.backup(appId, { format: 'zip' }, { idempotencyKey: 'lost-answer' });
    h.sim.control.setFault('apps.backup', { errorCode: 'idempotency_key_reused' });
    await h.pass();
    expect(h.attempts()).toMatchObject([
      { answer: 'idempotency_key_reused', runId: earlier.run_id, status: 'following' },
    ]);
    h.clock.advance(10 * MINUTE);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
    expect(h.changes('apps.backup').map((c) => c.key)).toEqual([
      'lost-answer',
      `dw-${h.installation}.1-backup-prod-app${appId}-a1`,
    ]);
    // Its answer lost, the backup it made is found among the app's newest, and read back.
    expect(h.notices().map((n) => n.notice.title)).toEqual([
      expect.stringMatching(/^Backup taken automatically: backup \S+ \(#\d+\) verified; copied off-site to /),
    ]);
  });
});
