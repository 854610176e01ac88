/** Policy evaluation as a table: which alerts a policy covers, and each named reason not to act. */
import { describe, expect, it } from 'vitest';
import type { AlertRow } from '../../src/alerts/alert-store.js';
import { policyConfigSchema, type PolicyConfig } from '../../src/remediation/actions/registry.js';
import {
  compilePolicies,
  decidePolicy,
  policyTarget,
  requestablePolicy,
  type DecisionContext,
  type RecordHistory,
} from '../../src/remediation/policy.js';

const NOW = Date.parse('2026-11-01T12:00:00Z');

function alert(over: Partial<AlertRow> = {}): AlertRow {
  return {
    fingerprint: 'failed_runs/run/7',
    job: 'runs',
    check: 'failed_runs',
    status: 'firing',
    severity: 'warning',
    summary: 'Update of shop (staging) failed at step check: boom',
    details: { run: '#7', step: 'check', reason: 'boom' },
    labels: {
      check: 'failed_runs',
      namespace: 'acme',
      environment_type: 'staging',
      app: 'shop',
      workflow: 'app_update',
      action: 'update',
      step: 'check',
    },
    url: null,
    since: null,
    subject: { type: 'run', id: 7 },
    facts: [],
    brief: null,
    firstSeenAt: NOW - 60_000,
    lastSeenAt: NOW,
    seenCount: 2,
    firedAt: NOW - 60_000,
    lastNotifiedAt: NOW - 60_000,
    resolvedAt: null,
    acknowledgement: null,
    ...over,
  };
}

function retryPolicy(over: Partial<Extract<PolicyConfig, { action: 'runs.retry' }>> = {}): PolicyConfig {
  return {
    name: 'p',
    action: 'runs.retry',
    match: {},
    match_re: {},
    max_attempts: 2,
    backoff: 600_000,
    now: false,
    automatic: true,
    ...over,
  };
}

const compile = (p: PolicyConfig, dryRun = false) => compilePolicies({ dry_run: dryRun, policies: [p] })[0]!;
const fresh: RecordHistory = { lastAttempt: 0, counted: 0, inFlight: false, nextAllowedAt: null, stopped: false };
const ctx: DecisionContext = { enabled: true, suspended: null, actionsLastHour: 0, maxActionsPerHour: 10, now: NOW };

describe('policyTarget', () => {
  it.each([
    ['a firing failed_runs alert about a run', alert(), retryPolicy(), { recordType: 'run', recordId: 7 }],
    ['a pending alert', alert({ status: 'pending' }), retryPolicy(), null],
    ['another check', alert({ check: 'stuck_runs', labels: { check: 'stuck_runs' } }), retryPolicy(), null],
    ['no subject id', alert({ subject: { type: 'run' } }), retryPolicy(), null],
    ['labels that do not match', alert(), retryPolicy({ match: { app: 'crm' } }), null],
    [
      'the reason, as a regex',
      alert(),
      retryPolicy({ match_re: { reason: 'bo+m' } }),
      { recordType: 'run', recordId: 7 },
    ],
    ['a reason regex is anchored', alert(), retryPolicy({ match_re: { reason: 'bo' } }), null],
    [
      'a list of environments',
      alert(),
      retryPolicy({ match: { environment_type: ['development', 'staging'] } }),
      { recordType: 'run', recordId: 7 },
    ],
  ])('%s', (_what, a, p, expected) => {
    expect(policyTarget(compile(p), a)).toEqual(expected);
  });

  it('apps.backup covers stale backups of an app by default, not the other backup problems', () => {
    const p = compile(policyConfigSchema.parse({ name: 'b', action: 'apps.backup' }));
    const stale = alert({
      check: 'backups',
      labels: { check: 'backups', problem: 'stale' },
      subject: { type: 'app', id: 3 },
    });
    expect(policyTarget(p, stale)).toEqual({ recordType: 'app', recordId: 3 });
    expect(policyTarget(p, { ...stale, labels: { check: 'backups', problem: 'unverified' } })).toBeNull();
    expect(policyTarget(p, alert())).toBeNull();
  });

  const aboutBackup = (problem: string, details: Record<string, string> = { app_id: '3' }) =>
    alert({ check: 'backups', labels: { check: 'backups', problem }, subject: { type: 'backup', id: 90 }, details });

  it.each([
    ['a failed backup: the app of its details', aboutBackup('failed'), { recordType: 'app', recordId: 3 }],
    ['an unverified one', aboutBackup('unverified'), { recordType: 'app', recordId: 3 }],
    ['an off-site copy failed', aboutBackup('offsite'), { recordType: 'app', recordId: 3 }],
    ['a backup problem one more backup does not fix', aboutBackup('no_offsite'), null],
    ['an alert about a backup that names no app', aboutBackup('failed', {}), null],
  ])('apps.backup with every problem it fixes: %s', (_what, a, expected) => {
    const p = compile(
      policyConfigSchema.parse({
        name: 'b',
        action: 'apps.backup',
        problems: ['stale', 'failed', 'unverified', 'offsite'],
      }),
    );
    expect(policyTarget(p, a)).toEqual(expected);
  });

  const appIs = (check: 'app_state' | 'maintenance', state: string) =>
    alert({ check, labels: { check }, subject: { type: 'app', id: 4 }, details: { state } });

  it.each([
    ['apps.restart: a stopped app', { action: 'apps.restart' }, appIs('app_state', 'stopped'), 4],
    ['apps.restart: an app in error', { action: 'apps.restart' }, appIs('app_state', 'error'), 4],
    ['apps.restart: a state it does not restart in', { action: 'apps.restart' }, appIs('app_state', 'broken'), null],
    ['apps.restart: states it names', { action: 'apps.restart', states: ['broken'] }, appIs('app_state', 'broken'), 4],
    ['apps.restart: not a maintenance alert', { action: 'apps.restart' }, appIs('maintenance', 'running'), null],
    ['apps.maintenance: an app left in maintenance', { action: 'apps.maintenance' }, appIs('maintenance', 'up'), 4],
    ['apps.maintenance: not an app_state alert', { action: 'apps.maintenance' }, appIs('app_state', 'stopped'), null],
  ])('%s', (_what, fields, a, expected) => {
    const p = compile(policyConfigSchema.parse({ name: 'p', ...fields }));
    expect(policyTarget(p, a)).toEqual(expected === null ? null : { recordType: 'app', recordId: expected });
  });
});

describe('decidePolicy', () => {
  const prod = alert({ labels: { ...alert().labels, environment_type: 'production' } });
  it.each([
    ['acts on a fresh record', alert(), retryPolicy(), fresh, ctx, { kind: 'act', attempt: 1 }],
    ['disabled', alert(), retryPolicy(), fresh, { ...ctx, enabled: false }, { kind: 'skip', reason: 'disabled' }],
    [
      'suspended',
      alert(),
      retryPolicy(),
      fresh,
      { ...ctx, suspended: 'policy' },
      { kind: 'skip', reason: 'policy_suspended' },
    ],
    [
      'paused in its environment',
      alert(),
      retryPolicy(),
      fresh,
      { ...ctx, suspended: 'environment' },
      { kind: 'skip', reason: 'environment_paused' },
    ],
    ['production not named', prod, retryPolicy(), fresh, ctx, { kind: 'skip', reason: 'production_not_named' }],
    [
      'production named in a list',
      prod,
      retryPolicy({ match: { environment_type: ['staging', 'production'] } }),
      fresh,
      ctx,
      { kind: 'act', attempt: 1 },
    ],
    [
      'production matched by a regex only',
      prod,
      retryPolicy({ match_re: { environment_type: 'prod.*' } }),
      fresh,
      ctx,
      { kind: 'skip', reason: 'production_not_named' },
    ],
    [
      'stopped by the service',
      alert(),
      retryPolicy(),
      { ...fresh, stopped: true, lastAttempt: 1 },
      ctx,
      { kind: 'skip', reason: 'stopped' },
    ],
    [
      'an attempt in flight',
      alert(),
      retryPolicy(),
      { ...fresh, inFlight: true, lastAttempt: 1 },
      ctx,
      { kind: 'skip', reason: 'attempt_in_progress' },
    ],
    [
      'max attempts used',
      alert(),
      retryPolicy(),
      { ...fresh, lastAttempt: 3, counted: 2 },
      ctx,
      { kind: 'skip', reason: 'max_attempts_reached' },
    ],
    [
      'refusals do not count',
      alert(),
      retryPolicy(),
      { ...fresh, lastAttempt: 3, counted: 1 },
      ctx,
      { kind: 'act', attempt: 4 },
    ],
    [
      'within the backoff',
      alert(),
      retryPolicy(),
      { ...fresh, lastAttempt: 1, counted: 1, nextAllowedAt: NOW + 1 },
      ctx,
      { kind: 'skip', reason: 'backoff_pending' },
    ],
    [
      'backoff over',
      alert(),
      retryPolicy(),
      { ...fresh, lastAttempt: 1, counted: 1, nextAllowedAt: NOW },
      ctx,
      { kind: 'act', attempt: 2 },
    ],
    [
      'retrying run',
      alert({ details: { retrying: 'yes' } }),
      retryPolicy(),
      fresh,
      ctx,
      { kind: 'skip', reason: 'run_retrying' },
    ],
    [
      'retrying run, now: true',
      alert({ details: { retrying: 'yes' } }),
      retryPolicy({ now: true }),
      fresh,
      ctx,
      { kind: 'act', attempt: 1 },
    ],
    [
      'run running again (a retry under way, whoever sent it), now: true or not',
      alert({ details: { retry_since: '2026-11-01T11:58:00.000Z' } }),
      retryPolicy({ now: true }),
      fresh,
      ctx,
      { kind: 'skip', reason: 'run_running_again' },
    ],
    [
      'hourly limit',
      alert(),
      retryPolicy(),
      fresh,
      { ...ctx, actionsLastHour: 10 },
      { kind: 'skip', reason: 'hourly_limit' },
    ],
    ['policy dry run', alert(), retryPolicy({ dry_run: true }), fresh, ctx, { kind: 'dry_run', attempt: 1 }],
    [
      'a policy on request only, not asked',
      alert(),
      retryPolicy({ automatic: false }),
      fresh,
      ctx,
      { kind: 'skip', reason: 'not_automatic' },
    ],
    [
      'a policy on request only, asked',
      alert(),
      retryPolicy({ automatic: false }),
      fresh,
      { ...ctx, requested: true },
      { kind: 'act', attempt: 1 },
    ],
    [
      'asked, an attempt in flight',
      alert(),
      retryPolicy({ automatic: false }),
      { ...fresh, inFlight: true, lastAttempt: 1 },
      { ...ctx, requested: true },
      { kind: 'skip', reason: 'attempt_in_progress' },
    ],
    [
      'asked, within the backoff',
      alert(),
      retryPolicy({ automatic: false }),
      { ...fresh, lastAttempt: 1, counted: 1, nextAllowedAt: NOW + 1 },
      { ...ctx, requested: true },
      { kind: 'skip', reason: 'backoff_pending' },
    ],
    [
      'asked, in dry run',
      alert(),
      retryPolicy({ automatic: false, dry_run: true }),
      fresh,
      { ...ctx, requested: true },
      { kind: 'dry_run', attempt: 1 },
    ],
    [
      'asked, remediation off',
      alert(),
      retryPolicy({ automatic: false }),
      fresh,
      { ...ctx, enabled: false, requested: true },
      { kind: 'skip', reason: 'disabled' },
    ],
  ] as const)('%s', (_what, a, p, history, c, expected) => {
    expect(decidePolicy(compile(p), a, history, c)).toEqual(expected);
  });

  it('the section dry_run applies unless the policy says otherwise', () => {
    expect(decidePolicy(compile(retryPolicy(), true), alert(), fresh, ctx)).toEqual({ kind: 'dry_run', attempt: 1 });
    expect(decidePolicy(compile(retryPolicy({ dry_run: false }), true), alert(), fresh, ctx)).toEqual({
      kind: 'act',
      attempt: 1,
    });
  });
});

describe('Leave maintenance, a button only', () => {
  // A policy that got past its schema's refusal of automatic: true (built by hand) acts only when asked.
  const leave = compile({
    ...policyConfigSchema.parse({ name: 'leave', action: 'apps.maintenance' }),
    automatic: true,
  } as PolicyConfig);
  const inMaintenance = alert({
    check: 'maintenance',
    labels: { check: 'maintenance' },
    subject: { type: 'app', id: 4 },
  });

  it.each([
    ['a cycle never acts', {}, { kind: 'skip', reason: 'not_automatic' }],
    ['a person asking does', { requested: true }, { kind: 'act', attempt: 1 }],
  ])('%s', (_what, asked, expected) => {
    expect(decidePolicy(leave, inMaintenance, fresh, { ...ctx, ...asked })).toEqual(expected);
  });
});

describe('requestablePolicy: the policy a Retry now button asks', () => {
  const prod = alert({ labels: { check: 'failed_runs', environment_type: 'production' } });
  it.each([
    [
      'the first covering policy, in config order',
      alert(),
      [retryPolicy({ name: 'a' }), retryPolicy({ name: 'b' })],
      true,
      'a',
    ],
    ['a policy on request only', alert(), [retryPolicy({ name: 'manual', automatic: false })], true, 'manual'],
    ['none when remediation is off', alert(), [retryPolicy()], false, undefined],
    ['none when no policy covers it', alert(), [retryPolicy({ match: { app: 'crm' } })], true, undefined],
    ['not a catch-all on production', prod, [retryPolicy({ name: 'any' })], true, undefined],
    [
      'a policy naming production, on production',
      prod,
      [retryPolicy({ name: 'any' }), retryPolicy({ name: 'prod', match: { environment_type: 'production' } })],
      true,
      'prod',
    ],
    ['none for a resolved alert', alert({ status: 'resolved' }), [retryPolicy()], true, undefined],
  ] as const)('%s', (_what, a, policies, enabled, expected) => {
    const compiled = compilePolicies({ dry_run: false, policies: [...policies] });
    expect(requestablePolicy(compiled, enabled, a)?.policy.config.name).toBe(expected);
  });
});
