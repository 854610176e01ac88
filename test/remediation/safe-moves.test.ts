/**
 * The safe moves a person asks for, against the simulator over loopback, through the same path as
 * Retry now (one attempt with a stored key, sent by the send loop, audited with who asked):
 * - Restart app on an app stopped or in error;
 * - Back up now on a failed, unverified or off-site-failed backup, and the backup read back by id
 *   (`backups.get`) until it settles: verified and copied off-site, left unverified, its copy failed;
 * - Leave maintenance (`on: false`), a button only: never made by a cycle, whatever the config says.
 * Each is offered only where a policy covers the alert's environment; two requests make one call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { MAINTENANCE_NEVER_AUTOMATIC } from '../../src/remediation/actions/apps-maintenance.js';
import { appOf, configText, Harness, MINUTE } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const ALICE = 'slack:alice (U0ALICE)';
const ASKED = (action: string, extra = '') => `
enabled: true
dry_run: false
policies:
  - { name: asked, action: ${action}, match: { environment_type: staging }, automatic: false, max_attempts: 2, backoff: 10m${extra} }
`;

/** Sends and follows until the attempts are finished (the runs take minutes of simulated time). */
async function settle(limit = 60): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await h.pass();
    if (h.attempts().every((a) => a.status === 'finished')) return;
    h.clock.advance(MINUTE);
  }
  throw new Error(`attempts not finished: ${JSON.stringify(h.attempts())}`);
}

describe('Restart app', () => {
  it.each(['stopped', 'error'])('restarts a staging app %s once when asked twice, and says so', async (state) => {
    h = await Harness.start(ASKED('apps.restart'));
    const app = appOf(h.sim, 'staging');
    h.sim.control.checks.app_state.set(app, state);
    const fingerprint = `app_state/app/${app}`;
    expect(await h.cycle({ apps: [app] })).toMatchObject({ planned: 0, skipped: { not_automatic: 1 } });
    expect(h.remediator.offer(fingerprint)).toBe('Restart app');

    const planned = h.remediator.request(fingerprint, ALICE, h.clock.now());
    expect(planned).toMatchObject({ outcome: 'planned', policy: 'asked', attempt: 1 });
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({
      outcome: 'skipped',
      reason: 'attempt_in_progress',
    });
    await settle();
    const key = planned.outcome === 'planned' ? planned.key : '';
    expect(key).toMatch(new RegExp(`^dw-${h.installation}\\.1-asked-app${app}-a1$`));
    expect(h.changes('apps.restart')).toEqual([{ key, status: 200 }]);
    expect(h.attempts()).toMatchObject([{ key, outcome: 'succeeded', body: {} }]);
    expect(h.notices().map((n) => n.notice.title)).toEqual(['App restarted']);
    expect(h.sim.control.state.apps.get(app)?.state).toBe('running');
    expect(h.audit().filter((a) => a.decision === 'acted')[0]?.detail).toMatch(/^asked by slack:alice \(U0ALICE\); /);
  });

  it.each([
    ['an environment the policy does not name', 'development', ASKED('apps.restart')],
    [
      'production, which the policy does not name',
      'production',
      'enabled: true\ndry_run: false\npolicies:\n  - { name: anywhere, action: apps.restart, automatic: false }',
    ],
    [
      'a state the policy does not restart in',
      'staging',
      'enabled: true\ndry_run: false\npolicies:\n  - { name: asked, action: apps.restart, automatic: false, states: [error] }',
    ],
  ] as const)('is not offered in %s, and a request sends nothing', async (_what, env, remediation) => {
    h = await Harness.start(remediation);
    const app = appOf(h.sim, env);
    h.sim.control.checks.app_state.set(app, 'stopped');
    await h.cycle({ apps: [app] });
    expect(h.openAlerts().map((a) => a.fingerprint)).toContain(`app_state/app/${app}`);
    expect(h.remediator.offer(`app_state/app/${app}`)).toBeUndefined();
    expect(h.remediator.request(`app_state/app/${app}`, ALICE, h.clock.now())).toEqual({ outcome: 'not_covered' });
    await h.pass();
    expect(h.changes('apps.restart')).toEqual([]);
  });
});

describe('Leave maintenance', () => {
  it('is never made by a cycle, even with a policy on every environment; asked, it is made once with on: false', async () => {
    h = await Harness.start(
      'enabled: true\ndry_run: false\npolicies:\n  - { name: leave, action: apps.maintenance, match: { environment_type: staging } }',
    );
    const app = appOf(h.sim, 'staging');
    h.sim.control.checks.maintenance.set(app, true);
    const fingerprint = `maintenance/app/${app}`;
    for (let i = 0; i < 5; i++) {
      expect(await h.cycleAndPass({ apps: [app] })).toMatchObject({
        cycle: { planned: 0, skipped: { not_automatic: 1 } },
        pass: { sent: 0 },
      });
      h.clock.advance(60 * MINUTE);
    }
    expect(h.changes('apps.maintenance')).toEqual([]);
    expect(h.sim.control.state.apps.get(app)?.maintenance).toBe(true);
    expect(h.remediator.offer(fingerprint)).toBe('Leave maintenance');

    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({ outcome: 'planned' });
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({ reason: 'attempt_in_progress' });
    await settle();
    expect(h.changes('apps.maintenance')).toHaveLength(1);
    expect(h.attempts()).toMatchObject([{ body: { on: false }, outcome: 'succeeded' }]);
    expect(h.notices().map((n) => n.notice.title)).toEqual(['Out of maintenance']);
    expect(h.sim.control.state.apps.get(app)?.maintenance).toBe(false);
  });

  it('a policy that asks for it automatically is refused, saying why', () => {
    const text = configText('enabled: true\npolicies:\n  - { name: leave, action: apps.maintenance, automatic: true }');
    expect(() => parseConfig(text, {}, 'test.yaml')).toThrow(ConfigError);
    expect(() => parseConfig(text, {}, 'test.yaml')).toThrow(MAINTENANCE_NEVER_AUTOMATIC);
  });
});

describe('Back up now, and the backup read back', () => {
  const ALL = ', problems: [stale, failed, unverified, offsite], readback: 30m';
  /** The backup problem each row makes: the newest backup failed, is not verified, or its copy failed. */
  const problems = {
    failed: { state: 'failed' },
    unverified: { verified: false },
    offsite: { offsiteError: 'access denied' },
  } as const;

  it.each([
    [
      'failed',
      'verified',
      'succeeded',
      /^Backup taken automatically: backup \S+ \(#\d+\) verified; copied off-site to \S+$/,
    ],
    ['unverified', 'unverified', 'backup_unverified', /\) not verified within 30m; copied off-site to \S+$/],
    [
      'offsite',
      'offsite_failed',
      'backup_offsite_failed',
      /\) verified; off-site copy to \S+ failed: upload failed: storage quota exceeded$/,
    ],
    ['failed', 'offsite_failed', 'backup_offsite_failed', /off-site copy to \S+ failed/],
  ] as const)(
    'on a %s backup: one backup for two requests, read back until it settles %s',
    async (problem, result, word, title) => {
      h = await Harness.start(ASKED('apps.backup', ALL));
      h.sim.control.checks.backups.setOutcome({ result, settleMs: 5 * MINUTE });
      const app = appOf(h.sim, 'staging');
      h.sim.control.checks.backups.add(app, problems[problem]);
      const records = { backupApps: [app], backupProblems: [problem] };
      await h.cycle(records);
      const [alert] = h.openAlerts();
      expect(alert?.labels.problem).toBe(problem);
      expect(h.remediator.offer(alert!.fingerprint)).toBe('Back up now');

      expect(h.remediator.request(alert!.fingerprint, ALICE, h.clock.now())).toMatchObject({ outcome: 'planned' });
      expect(h.remediator.request(alert!.fingerprint, ALICE, h.clock.now())).toMatchObject({
        reason: 'attempt_in_progress',
      });
      await settle();
      expect(h.changes('apps.backup')).toHaveLength(1);
      const [attempt] = h.attempts();
      expect(attempt).toMatchObject({ outcome: word, backupId: expect.any(Number) });
      expect(attempt?.outcomeDetail).toMatch(title);
      const [notice] = h.notices().map((n) => n.notice);
      expect(notice?.title).toMatch(title);
      expect(notice?.severity).toBe(word === 'succeeded' ? 'ok' : alert!.severity);
      expect(notice?.fields).toContainEqual({ label: 'Verified', value: result === 'unverified' ? 'no' : 'yes' });
      // Read back by id: backups.get of the backup the answer named, until it settled.
      const reads = h.sim.control.requests().filter((r) => r.fn === 'backups.get');
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.every((r) => r.path.endsWith(`/backups/${attempt!.backupId}`))).toBe(true);
      expect(
        await h.metric({
          policy: 'asked',
          action: 'apps.backup',
          outcome: word === 'succeeded' ? 'succeeded' : 'failed',
        }),
      ).toBe(1);
    },
  );

  it('an automatic backup of a stale app is read back too', async () => {
    h = await Harness.start(
      'enabled: true\ndry_run: false\npolicies:\n  - { name: stale, action: apps.backup, match: { environment_type: staging } }',
    );
    const app = appOf(h.sim, 'staging');
    h.sim.control.checks.backups.age(app, { hours: 24 * 30 });
    expect(await h.cycle({ backupApps: [app] })).toMatchObject({ planned: 1 });
    await settle();
    expect(h.attempts()).toMatchObject([{ outcome: 'succeeded' }]);
    expect(h.notices().map((n) => n.notice.title)).toEqual([
      expect.stringMatching(/^Backup taken automatically: backup \S+ \(#\d+\) verified; copied off-site to \S+$/),
    ]);
  });

  it('a policy that does not name a backup problem does not offer Back up now on it', async () => {
    h = await Harness.start(ASKED('apps.backup'));
    const app = appOf(h.sim, 'staging');
    h.sim.control.checks.backups.add(app, { state: 'failed' });
    await h.cycle({ backupApps: [app], backupProblems: ['failed'] });
    const [alert] = h.openAlerts();
    expect(h.remediator.offer(alert!.fingerprint)).toBeUndefined();
    expect(h.remediator.request(alert!.fingerprint, ALICE, h.clock.now())).toEqual({ outcome: 'not_covered' });
  });
});
