/**
 * The remediation stage against the simulator over loopback, through the real detectors and
 * lifecycle: retry once, never twice, production untouched without an explicit policy, retrying
 * runs left alone, max_attempts and backoff across repeated failures, dry run, the hourly limit,
 * backups, following to an outcome, and the audit that says all of it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/lib/logger.js';
import { createRemediation } from '../../src/remediation/create-remediation.js';
import { JOINED_LINE } from '../../src/remediation/outcome-notice.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { appOf, Harness, HOUR, MINUTE, type HarnessOptions } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const RETRY_NONPROD = `
enabled: true
dry_run: false
policies:
  - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] }, max_attempts: 2, backoff: 10m }
`;

/** A failed update run of the app, failed at `update_modules`. */
function failedRun(appId: number, reason = 'module update failed: column "x" does not exist') {
  return h.sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'update_modules', reason });
}

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  /** A harness on this backend. */
  const start = (section: string, options: Omit<HarnessOptions, 'dir' | 'state' | 'backend'> = {}) =>
    Harness.start(section, { ...options, backend });

  describe('a failed staging run', () => {
    it('is retried once, followed to success, and the alert channels are told', async () => {
      h = await start(RETRY_NONPROD);
      const run = failedRun(appOf(h.sim, 'staging'));

      const first = await h.cycle({ runs: [run.id] });
      expect(first.planned).toBe(1);
      // The key is recorded before anything is sent.
      expect(h.attempts()).toMatchObject([
        {
          status: 'planned',
          sendCount: 0,
          key: `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`,
          body: { now: false },
        },
      ]);
      expect(h.changes('runs.retry')).toEqual([]);

      await h.pass();
      expect(h.changes('runs.retry')).toEqual([
        { key: `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`, status: 200 },
      ]);
      expect(h.attempts()).toMatchObject([{ status: 'following', runId: run.id, answer: 'started', counted: true }]);

      h.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ status: 'finished', outcome: 'succeeded' }]);
      expect(h.notices()).toMatchObject([
        {
          channel: 'ops-log',
          notice: { topic: 'remediation', title: 'Retried automatically: succeeded', severity: 'ok' },
        },
      ]);
      expect(h.audit().map((a) => [a.decision, a.answer, a.outcome])).toEqual([
        ['acted', null, null],
        ['answered', 'started', null],
        ['outcome', 'started', 'succeeded'],
      ]);
      expect(await h.metric({ policy: 'retry-nonprod', action: 'runs.retry', outcome: 'acted' })).toBe(1);
      expect(await h.metric({ policy: 'retry-nonprod', action: 'runs.retry', outcome: 'succeeded' })).toBe(1);
    });

    it('is not retried again by a second cycle, nor after it succeeded', async () => {
      h = await start(RETRY_NONPROD);
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycle({ runs: [run.id] });
      // A second cycle before the first attempt was sent: the alert still fires, nothing new.
      const second = await h.cycle({ runs: [run.id] });
      expect(second).toMatchObject({ planned: 0, skipped: { attempt_in_progress: 1 } });
      await h.pass();

      // The run is going again: the runs job resolves the alert; nothing to act on.
      const third = await h.cycleAndPass({ runs: [run.id] });
      expect(third.cycle.planned).toBe(0);
      expect(h.openAlerts().filter((a) => a.check === 'failed_runs')).toEqual([]);

      h.clock.advance(10 * MINUTE);
      await h.pass();
      const fourth = await h.cycleAndPass({ runs: [run.id] });
      expect(fourth.cycle.planned).toBe(0);
      expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(h.changes('runs.retry')).toHaveLength(1);
    });
  });

  describe('production', () => {
    it('is not touched by a policy that does not name it, even a catch-all', async () => {
      h = await start(
        `
enabled: true
dry_run: false
policies:
  - { name: retry-all, action: runs.retry, match: {}, match_re: { environment_type: "prod.*|staging" } }
`,
      );
      const run = failedRun(appOf(h.sim, 'production'));
      const { cycle } = await h.cycleAndPass({ runs: [run.id] });
      expect(cycle).toMatchObject({ planned: 0, skipped: { production_not_named: 1 } });
      expect(h.changes('runs.retry')).toEqual([]);
      expect(h.audit()).toMatchObject([{ decision: 'skipped', reason: 'production_not_named', recordId: run.id }]);
      // Cycles go on; the skip is recorded once, not every cycle.
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.audit()).toHaveLength(1);
    });

    it('is acted on by a policy that names production explicitly', async () => {
      h = await start(
        `
enabled: true
dry_run: false
policies:
  - { name: retry-prod, action: runs.retry, match: { environment_type: production, step: update_modules } }
`,
      );
      const run = failedRun(appOf(h.sim, 'production'));
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.changes('runs.retry')).toEqual([
        { key: `dw-${h.installation}.1-retry-prod-run${run.id}-a1`, status: 200 },
      ]);
      h.clock.advance(10 * MINUTE);
      await h.pass();
      // The outcome goes where the alert went: production's route.
      expect(h.notices()).toMatchObject([
        { channel: 'prod-log', notice: { title: 'Retried automatically: succeeded' } },
      ]);
    });
  });

  describe('matching', () => {
    it.each([
      ['the failed step', `{ step: update_modules }`, {}, true],
      ['another step', `{ step: check }`, {}, false],
      ['the reason regex', `{}`, { reason: 'module update failed: .*' }, true],
      ['a reason that differs', `{}`, { reason: 'disk full.*' }, false],
      ['workflow and action', `{ workflow: app_update, action: update }`, {}, true],
      ['another namespace', `{ namespace: nowhere }`, {}, false],
    ])('on %s', async (_what, match, matchRe, acts) => {
      h = await start(
        `
enabled: true
dry_run: false
policies:
  - { name: p, action: runs.retry, match: ${match}, match_re: ${JSON.stringify(matchRe)} }
`,
      );
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.changes('runs.retry')).toHaveLength(acts ? 1 : 0);
    });
  });

  describe('a run the service retries by itself', () => {
    it('is left alone unless the policy says now: true', async () => {
      h = await start(RETRY_NONPROD);
      const appId = appOf(h.sim, 'staging');
      const run = h.sim.control.addRun({
        appId,
        action: 'update',
        state: 'error',
        failedStep: 'check',
        retrying: true,
      });
      const { cycle } = await h.cycleAndPass({ runs: [run.id] });
      expect(h.openAlerts()).toMatchObject([{ details: { retrying: 'yes' } }]);
      expect(cycle).toMatchObject({ planned: 0, skipped: { run_retrying: 1 } });
      expect(h.changes('runs.retry')).toEqual([]);
      expect(h.audit()).toMatchObject([{ decision: 'skipped', reason: 'run_retrying' }]);
    });

    it('is retried at once with now: true', async () => {
      h = await start(
        `
enabled: true
dry_run: false
policies:
  - { name: retry-now, action: runs.retry, match: { environment_type: staging }, now: true }
`,
      );
      const run = h.sim.control.addRun({
        appId: appOf(h.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'check',
        retrying: true,
      });
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.changes('runs.retry')).toEqual([
        { key: `dw-${h.installation}.1-retry-now-run${run.id}-a1`, status: 200 },
      ]);
      expect(h.attempts()).toMatchObject([{ body: { now: true }, answer: 'started' }]);
    });
  });

  describe('repeated failures', () => {
    it('respect max_attempts and the backoff between attempts', async () => {
      h = await start(RETRY_NONPROD);
      const appId = appOf(h.sim, 'development');
      const run = failedRun(appId);
      h.sim.control.failNextRun({ appId, step: 'restart', reason: 'health check timed out after 120 s' });
      h.sim.control.failNextRun({ appId, step: 'restart', reason: 'health check timed out after 120 s' });

      await h.cycleAndPass({ runs: [run.id] });
      h.clock.advance(5 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ attempt: 1, outcome: 'run_failed' }]);
      expect(h.notices().map((n) => n.notice.title)).toEqual([
        'Retried automatically: failed at step restart: health check timed out after 120 s',
      ]);

      // Within the backoff: no second attempt.
      const early = await h.cycleAndPass({ runs: [run.id] });
      expect(early.cycle).toMatchObject({ planned: 0, skipped: { backoff_pending: 1 } });

      h.clock.advance(10 * MINUTE);
      const second = await h.cycleAndPass({ runs: [run.id] });
      expect(second.cycle.planned).toBe(1);
      h.clock.advance(5 * MINUTE);
      await h.pass();

      h.clock.advance(HOUR);
      const after = await h.cycleAndPass({ runs: [run.id] });
      expect(after.cycle).toMatchObject({ planned: 0, skipped: { max_attempts_reached: 1 } });
      expect(h.changes('runs.retry').map((c) => c.key)).toEqual([
        `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`,
        `dw-${h.installation}.2-retry-nonprod-run${run.id}-a2`,
      ]);
      expect(
        h
          .audit()
          .filter((a) => a.decision === 'skipped')
          .map((a) => a.reason),
      ).toEqual(['backoff_pending', 'max_attempts_reached']);
    });

    it('a clock stepped back a day does not add the step to the backoff', async () => {
      h = await start(RETRY_NONPROD);
      const appId = appOf(h.sim, 'development');
      const run = failedRun(appId);
      h.sim.control.failNextRun({ appId, step: 'restart', reason: 'health check timed out after 120 s' });
      await h.cycleAndPass({ runs: [run.id] });
      h.clock.advance(5 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ attempt: 1, outcome: 'run_failed' }]);

      h.clock.stepBack(24 * HOUR);
      h.clock.advance(10 * MINUTE);
      expect((await h.cycleAndPass({ runs: [run.id] })).cycle.planned).toBe(1);
    });

    it('hold the backoff for every policy on the record: a second policy does not retry at once', async () => {
      const second =
        '  - { name: retry-health, action: runs.retry, match_re: { reason: "health check.*" }, backoff: 10m }\n';
      h = await start(`${RETRY_NONPROD}${second}`);
      const appId = appOf(h.sim, 'staging');
      const run = failedRun(appId, 'health check timed out after 120 s');
      h.sim.control.failNextRun({ appId, step: 'restart', reason: 'health check timed out after 120 s' });

      await h.cycleAndPass({ runs: [run.id] });
      h.clock.advance(5 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ policy: 'retry-nonprod', attempt: 1, outcome: 'run_failed' }]);

      // The run failed again a minute ago: the other policy that covers it waits the backoff too.
      h.clock.advance(MINUTE);
      const early = await h.cycleAndPass({ runs: [run.id] });
      expect(early.cycle).toMatchObject({ planned: 0, skipped: { backoff_pending: 2 } });
      expect(h.changes('runs.retry')).toHaveLength(1);

      h.clock.advance(10 * MINUTE);
      expect((await h.cycleAndPass({ runs: [run.id] })).cycle.planned).toBe(1);
      expect(h.changes('runs.retry')).toHaveLength(2);
    });
  });

  describe('dry run', () => {
    it('sends nothing and records what it would have done, once', async () => {
      h = await start(
        `
enabled: true
dry_run: true
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`,
      );
      const run = failedRun(appOf(h.sim, 'staging'));
      const { cycle } = await h.cycleAndPass({ runs: [run.id] });
      await h.cycleAndPass({ runs: [run.id] });
      expect(cycle.dryRun).toBe(1);
      expect(h.sim.control.requests().filter((r) => r.method === 'POST')).toEqual([]);
      expect(h.attempts()).toEqual([]);
      expect(h.audit()).toMatchObject([
        {
          decision: 'dry_run',
          reason: 'dry_run',
          key: `dw-${h.installation}.1-retry-staging-run${run.id}-a1`,
          detail: `would send runs.retry on run #${run.id} with {"now":false}`,
        },
      ]);
      expect(await h.metric({ policy: 'retry-staging', action: 'runs.retry', outcome: 'dry_run' })).toBe(1);
    });

    it('per policy overrides the section', async () => {
      h = await start(
        `
enabled: true
dry_run: false
policies:
  - { name: careful, action: runs.retry, match: { environment_type: staging }, dry_run: true }
`,
      );
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.changes('runs.retry')).toEqual([]);
      expect(h.audit()).toMatchObject([{ decision: 'dry_run' }]);
    });

    it('disabled: nothing sent, the audit says so once', async () => {
      h = await start(
        `
enabled: false
dry_run: false
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`,
      );
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycleAndPass({ runs: [run.id] });
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.changes('runs.retry')).toEqual([]);
      expect(h.audit()).toMatchObject([{ decision: 'skipped', reason: 'disabled' }]);
    });
  });

  describe('the hourly limit', () => {
    it('stops acting once max_actions_per_hour is reached, and counts across restarts', async () => {
      const section = `
enabled: true
dry_run: false
max_actions_per_hour: 1
policies:
  - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] } }
`;
      h = await start(section);
      const a = failedRun(appOf(h.sim, 'staging'));
      const b = failedRun(appOf(h.sim, 'development'));
      const { cycle } = await h.cycleAndPass({ runs: [a.id, b.id] });
      expect(cycle).toMatchObject({ planned: 1, skipped: { hourly_limit: 1 } });

      // A restart does not reset the count: it is read from SQLite.
      await h.close({ keepDir: true });
      h = h.restart(section);
      const again = await h.cycleAndPass({ runs: [a.id, b.id] });
      expect(again.cycle.planned).toBe(0);

      h.clock.advance(HOUR + MINUTE);
      const later = await h.cycleAndPass({ runs: [a.id, b.id] });
      expect(later.cycle.planned).toBe(1);
      expect(h.changes('runs.retry')).toHaveLength(2);
    });

    it('counts the hour on after a clock stepped back a day, not the day again', async () => {
      h = await start(`
enabled: true
dry_run: false
max_actions_per_hour: 1
policies:
  - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] } }
`);
      const a = failedRun(appOf(h.sim, 'staging'));
      const b = failedRun(appOf(h.sim, 'development'));
      expect((await h.cycleAndPass({ runs: [a.id, b.id] })).cycle).toMatchObject({ skipped: { hourly_limit: 1 } });
      h.clock.stepBack(24 * HOUR);
      h.clock.advance(HOUR + MINUTE);
      expect((await h.cycleAndPass({ runs: [a.id, b.id] })).cycle.planned).toBe(1);
    });
  });

  describe('apps.backup', () => {
    const BACKUP_PROD = `
enabled: true
dry_run: false
policies:
  - { name: backup-prod, action: apps.backup, match: { environment_type: production }, format: dump }
`;

    it('takes a backup of a production app whose newest backup is too old, and follows it', async () => {
      h = await start(BACKUP_PROD);
      const appId = appOf(h.sim, 'production');
      h.sim.control.checks.backups.age(appId, { hours: 48 });
      const { cycle } = await h.cycleAndPass({ backupApps: [appId] });
      expect(cycle.planned).toBe(1);
      expect(h.changes('apps.backup')).toEqual([
        { key: `dw-${h.installation}.1-backup-prod-app${appId}-a1`, status: 200 },
      ]);
      expect(h.attempts()).toMatchObject([{ body: { format: 'dump' }, status: 'following' }]);

      h.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(h.notices()).toMatchObject([
        {
          channel: 'prod-log',
          notice: {
            title: expect.stringMatching(/^Backup taken automatically: backup \S+ \(#\d+\) verified; copied off-site/),
          },
        },
      ]);
      // The next backups cycle sees a fresh backup: the alert resolves.
      await h.cycleAndPass({ backupApps: [appId] });
      expect(h.openAlerts().filter((a) => a.check === 'backups')).toEqual([]);
    });

    it('already_running: joins the backup under way and follows that run', async () => {
      h = await start(BACKUP_PROD);
      const appId = appOf(h.sim, 'production', 1);
      h.sim.control.checks.backups.age(appId, { hours: 48 });
      await h.cycle({ backupApps: [appId] });
      // Someone starts a backup by hand between the decision and the send.
      const byHand = await h.client.apps.backup(appId, { format: 'zip' }, { idempotencyKey: 'by-hand-1' });
      await h.pass();
      expect(h.attempts()).toMatchObject([{ answer: 'already_running', runId: byHand.run_id, status: 'following' }]);
      h.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(h.audit().find((a) => a.decision === 'answered')).toMatchObject({
        answer: 'already_running',
        reason: 'joined the run under way',
      });
      // The channels are not told deploy-watchdog took a backup someone else started.
      expect(h.notices().map((n) => n.notice.lines)).toEqual([[expect.stringMatching(/^Alert: /), JOINED_LINE]]);
    });
  });

  describe('following', () => {
    it('gives up after follow_timeout and says the outcome is unknown', async () => {
      h = await start(
        `
enabled: true
dry_run: false
follow_timeout: 30s
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`,
      );
      // Failed at the first step: the retried run has every step still to do (minutes).
      const run = h.sim.control.addRun({
        appId: appOf(h.sim, 'staging'),
        action: 'update',
        state: 'error',
        failedStep: 'pull_code',
      });
      await h.cycleAndPass({ runs: [run.id] });
      h.clock.advance(40_000);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ outcome: 'follow_timeout' }]);
      expect(h.notices().map((n) => n.notice.title)).toEqual([
        'Retried automatically: outcome unknown, still running after 40s',
      ]);
    });

    it('survives a restart: the new process polls the run it did not start', async () => {
      const section = RETRY_NONPROD;
      h = await start(section);
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycleAndPass({ runs: [run.id] });
      await h.close({ keepDir: true });

      h.clock.advance(10 * MINUTE);
      h = h.restart(section);
      await h.pass();
      expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
      expect(h.changes('runs.retry')).toHaveLength(1);
    });

    it('a clock stepped back an hour and more: the followed run is still polled, not left for the step', async () => {
      h = await start(RETRY_NONPROD);
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycleAndPass({ runs: [run.id] });
      expect(h.attempts()).toMatchObject([{ status: 'following' }]);

      h.clock.stepBack(2 * HOUR);
      expect((await h.pass()).polled).toBe(1);
      // Left for one poll interval of the new time, not for the step again.
      expect(h.attempts()[0]!.nextAt).toBe(h.clock.now() + h.config.remediation.poll_interval);
    });

    it('no readable answer for follow_timeout: the same key until then, then "may or may not have been made"', async () => {
      h = await start(`
enabled: true
dry_run: false
follow_timeout: 5m
policies:
  - { name: retry-staging, action: runs.retry, match: { environment_type: staging } }
`);
      const run = failedRun(appOf(h.sim, 'staging'));
      h.sim.control.setFault('runs.retry', { html502: true });
      await h.cycleAndPass({ runs: [run.id] });
      h.clock.advance(2 * MINUTE);
      await h.pass();
      h.clock.advance(4 * MINUTE);
      await h.pass();
      const key = `dw-${h.installation}.1-retry-staging-run${run.id}-a1`;
      expect(h.changes('runs.retry')).toEqual([
        { key, status: 502 },
        { key, status: 502 },
      ]);
      expect(h.attempts()).toMatchObject([{ outcome: 'unanswered', counted: true }]);
      expect(h.notices().map((n) => n.notice.title)).toEqual([
        'Automatic retry: no answer from the service in 6m; it may or may not have been made',
      ]);
    });
  });

  describe('a configuration change between deciding and sending', () => {
    const LIVE = RETRY_NONPROD;
    const DRY = RETRY_NONPROD.replace('dry_run: false', 'dry_run: true');

    it('withdraws an attempt that was never sent', async () => {
      h = await start(LIVE);
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycle({ runs: [run.id] });
      await h.close({ keepDir: true });
      h = h.restart(DRY);
      await h.pass();
      expect(h.changes('runs.retry')).toEqual([]);
      expect(h.attempts()).toMatchObject([{ outcome: 'withdrawn', counted: false, sendCount: 0 }]);
      expect(h.audit().at(-1)).toMatchObject({ decision: 'outcome', reason: 'dry_run', outcome: 'withdrawn' });
    });

    it('with every policy removed, a remediator is still built while an attempt is unfinished, and none once it ended', async () => {
      h = await start(LIVE);
      const run = failedRun(appOf(h.sim, 'staging'));
      await h.cycle({ runs: [run.id] });
      const none = { ...h.config, remediation: { ...h.config.remediation, policies: [] } };
      const parts = {
        config: none,
        client: h.client,
        store: h.store,
        notifier: h.notifier,
        clock: h.clock,
        logger: silentLogger,
      };
      const carryOn = createRemediation(parts);
      expect(carryOn).toBeDefined();
      await carryOn!.executePending();
      expect(h.attempts()).toMatchObject([{ outcome: 'withdrawn', sendCount: 0 }]);
      expect(h.audit().at(-1)).toMatchObject({ decision: 'outcome', reason: 'policy_removed', outcome: 'withdrawn' });
      expect(createRemediation(parts)).toBeUndefined();
    });

    it('still sends again, with its key, an attempt that was sent once', async () => {
      h = await start(LIVE);
      const run = failedRun(appOf(h.sim, 'staging'));
      h.sim.control.setFault('runs.retry', { errorCode: 'internal_error', times: 1 });
      await h.cycleAndPass({ runs: [run.id] });
      await h.close({ keepDir: true });
      h = h.restart(DRY);
      h.clock.advance(2 * MINUTE);
      await h.pass();
      const key = `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`;
      expect(h.changes('runs.retry')).toEqual([
        { key, status: 500 },
        { key, status: 200 },
      ]);
    });
  });
});

describe('an attempt never sent, whose alert or policy changed before its turn', () => {
  const RESTART = `
enabled: true
dry_run: false
policies:
  - { name: restart-staging, action: apps.restart, match: { environment_type: staging } }
`;

  /** A staging app in `state` whose restart a cycle planned; nothing sent yet. */
  async function plannedRestart(state: string): Promise<number> {
    h = await Harness.start(RESTART);
    const app = appOf(h.sim, 'staging');
    h.sim.control.checks.app_state.set(app, state);
    expect(await h.cycle({ apps: [app] })).toMatchObject({ planned: 1 });
    return app;
  }

  /** The pass sends nothing: the attempt is withdrawn for `reason`, uncounted. */
  async function expectWithdrawn(reason: string): Promise<void> {
    await h.pass();
    expect(h.changes('apps.restart')).toEqual([]);
    expect(h.attempts()).toMatchObject([{ outcome: 'withdrawn', counted: false, sendCount: 0 }]);
    expect(h.audit().at(-1)).toMatchObject({ decision: 'outcome', reason, outcome: 'withdrawn' });
  }

  it('is withdrawn when its alert resolved meanwhile: a running app is not restarted', async () => {
    const app = await plannedRestart('stopped');
    // The send loop is slow to come to it (a pass following other runs); meanwhile someone started
    // the app and the next cycle resolved its alert.
    h.sim.control.checks.app_state.set(app, 'running');
    h.clock.advance(MINUTE);
    await h.cycle({ apps: [app] });
    expect(h.openAlerts()).toEqual([]);
    await expectWithdrawn('alert_resolved');
  });

  it('is withdrawn when a reload narrowed its policy so that it no longer covers the alert', async () => {
    await plannedRestart('error');
    await h.close({ keepDir: true });
    // The operator narrows the policy (stopped apps only) and reloads before the send.
    h = h.restart(RESTART.replace('match:', 'states: [stopped], match:'));
    await expectWithdrawn('not_covered');
  });

  it('is still sent while its alert fires and its policy covers it', async () => {
    const app = await plannedRestart('stopped');
    h.clock.advance(MINUTE);
    await h.cycle({ apps: [app] });
    await h.pass();
    expect(h.changes('apps.restart')).toHaveLength(1);
  });
});

describe('an attempt of an action this version does not know (a newer one wrote it, then was rolled back)', () => {
  it('is left as it is, and not due again before the next poll: the send loop does not spin on it', async () => {
    h = await Harness.start(RETRY_NONPROD);
    const now = h.clock.now();
    h.store.transaction(() =>
      h.store.db
        .prepare(
          `INSERT INTO remediation_attempts (policy, action, record_type, record_id, attempt, idempotency_key, body,
             fingerprint, labels, severity, summary, life, status, planned_at, next_at)
           VALUES ('update-staging', 'apps.update', 'app', 7, 1, 'dw-newer-key', '{}', 'app_state/app/7', '{}',
             'warning', 'Shop stopped', ?, 'planned', ?, ?)`,
        )
        .run(now, now, now),
    );
    await h.pass();
    expect(h.attempts()).toMatchObject([
      { action: 'apps.update', status: 'planned', sendCount: 0, nextAt: now + h.config.remediation.poll_interval },
    ]);
    // Due again a poll interval later, and left as it is again.
    h.clock.advance(h.config.remediation.poll_interval);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ status: 'planned', sendCount: 0 }]);
  });
});
