/**
 * `access_denied` (or `function_not_allowed`, a function not held there) pauses a policy for the
 * app's environment only (reference §5.4: a token holds a change function only for the
 * environments its user's role may change). Against the simulator on loopback with a token that
 * may change staging but not development: one policy covering both.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOf, Harness, MINUTE, STAGING_ONLY_TOKEN, STAGING_ONLY_UNHELD_TOKEN } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const SECTION = `
enabled: true
dry_run: false
policies:
  - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] }, max_attempts: 2, backoff: 10m }
`;
const PAUSED =
  'Remediation policy retry-nonprod paused for development: the service refused runs.retry with access_denied';

/** The two ways the reference may refuse a change in an environment the role may not change (§5.4-5). */
const REFUSALS = [
  { code: 'access_denied', token: STAGING_ONLY_TOKEN },
  { code: 'function_not_allowed', token: STAGING_ONLY_UNHELD_TOKEN },
] as const;

/** A failed run; a second one of the same app needs another action (one alert per app and action). */
function failedRun(appId: number, action: 'update' | 'update_modules' = 'update') {
  return h.sim.control.addRun({ appId, action, state: 'error', failedStep: 'check' });
}

/** The requests the simulator answered for runs.retry on one run. */
function retriesOf(runId: number): { key: string | undefined; status: number }[] {
  return h.sim.control
    .requests()
    .filter((r) => r.fn === 'runs.retry' && r.path.endsWith(`/runs/${runId}/retry`))
    .map((r) => ({ key: r.idempotencyKey, status: r.status }));
}

const watchdogAlerts = () => h.openAlerts().filter((a) => a.check === 'watchdog');

describe('a refusal in one environment', () => {
  it.each(REFUSALS)(
    '$code pauses the policy for development only: one alert naming development, staging still retried',
    async ({ code, token }) => {
      h = await Harness.start(SECTION, { token });
      const dev = failedRun(appOf(h.sim, 'development'));
      await h.cycleAndPass({ runs: [dev.id] });
      expect(retriesOf(dev.id)).toEqual([{ key: `dw-${h.installation}.1-retry-nonprod-run${dev.id}-a1`, status: 403 }]);
      expect(h.attempts()).toMatchObject([{ outcome: 'suspended', counted: false }]);
      expect(watchdogAlerts()).toMatchObject([
        {
          fingerprint: 'watchdog/remediation/retry-nonprod/environment/development',
          status: 'firing',
          summary: PAUSED.replace('access_denied', code),
          labels: { check: 'watchdog', source: 'remediation', policy: 'retry-nonprod', environment: 'development' },
          details: { code, environment: 'development' },
        },
      ]);
      // Routed like every watchdog alert (not by environment_type): the catch-all route's channel.
      const queued = h.store.db
        .prepare(
          `SELECT channel FROM outbox WHERE fingerprint = 'watchdog/remediation/retry-nonprod/environment/development'`,
        )
        .all() as { channel: string }[];
      expect(queued).toEqual([{ channel: 'ops-log' }]);

      // Later: a failed staging run is retried, another development run is not even tried.
      const staging = failedRun(appOf(h.sim, 'staging'));
      const dev2 = failedRun(appOf(h.sim, 'development'), 'update_modules');
      const { cycle } = await h.cycleAndPass({ runs: [dev.id, staging.id, dev2.id] });
      expect(cycle).toMatchObject({ planned: 1, skipped: { environment_paused: 2 } });
      expect(retriesOf(staging.id)).toEqual([
        { key: `dw-${h.installation}.2-retry-nonprod-run${staging.id}-a1`, status: 200 },
      ]);
      expect(retriesOf(dev2.id)).toEqual([]);
      h.clock.advance(10 * MINUTE);
      await h.pass();
      expect(h.attempts().find((a) => a.recordId === staging.id)).toMatchObject({ outcome: 'succeeded' });

      // Still one alert, fired once.
      expect(watchdogAlerts()).toHaveLength(1);
      const firings = h.store.db
        .prepare(`SELECT COUNT(*) AS n FROM events WHERE fingerprint LIKE 'watchdog/%' AND kind = 'firing'`)
        .get() as { n: number };
      expect(firings.n).toBe(1);

      // The audit names the environment of every row, and what the suspension covers.
      expect(h.audit().filter((a) => a.decision === 'suspended')).toMatchObject([
        {
          policy: 'retry-nonprod',
          recordId: dev.id,
          environment: 'development',
          reason: `${code}: paused for development`,
          answer: code,
        },
      ]);
      expect(h.audit().filter((a) => a.decision === 'skipped')).toMatchObject([
        { recordId: dev.id, environment: 'development', reason: 'environment_paused' },
        { recordId: dev2.id, environment: 'development', reason: 'environment_paused' },
      ]);
      expect(h.audit().find((a) => a.decision === 'acted' && a.recordId === staging.id)).toMatchObject({
        environment: 'staging',
      });
    },
  );

  it('holds across cycles, is lifted when the remediator starts again (restart or reload), and comes back if the token still may not', async () => {
    h = await Harness.start(SECTION, { token: STAGING_ONLY_TOKEN });
    const dev = failedRun(appOf(h.sim, 'development'));
    await h.cycleAndPass({ runs: [dev.id] });
    h.clock.advance(11 * MINUTE);
    // Past the backoff, the pause still holds: it is state, not a timer.
    const later = await h.cycleAndPass({ runs: [dev.id] });
    expect(later.cycle.skipped).toEqual({ environment_paused: 1 });
    expect(retriesOf(dev.id)).toHaveLength(1);

    // The restart (or SIGHUP reload) lifts it: the alert resolves, the audit says what was lifted.
    await h.close({ keepDir: true });
    h = h.restart(SECTION, { token: STAGING_ONLY_TOKEN });
    h.remediator.start();
    await h.remediator.stop(0);
    expect(watchdogAlerts()).toEqual([]);
    expect(h.audit().at(-1)).toMatchObject({
      decision: 'resumed',
      policy: 'retry-nonprod',
      environment: 'development',
      answer: 'access_denied',
      reason: 'lifted at start (restart or config reload): paused for development',
    });

    // The token still may not change development: one more refused request (a new key, the refusal
    // changed nothing), paused again, a new alert.
    await h.cycleAndPass({ runs: [dev.id] });
    expect(retriesOf(dev.id)).toEqual([
      { key: `dw-${h.installation}.1-retry-nonprod-run${dev.id}-a1`, status: 403 },
      { key: `dw-${h.installation}.2-retry-nonprod-run${dev.id}-a2`, status: 403 },
    ]);
    expect(watchdogAlerts()).toMatchObject([{ summary: PAUSED, status: 'firing' }]);
  });

  it('withdraws a development attempt planned in the same cycle and never sent; the staging one is sent', async () => {
    h = await Harness.start(SECTION, { token: STAGING_ONLY_TOKEN });
    const devApp = appOf(h.sim, 'development');
    const [a, b] = [failedRun(devApp), failedRun(devApp, 'update_modules')];
    const staging = failedRun(appOf(h.sim, 'staging'));
    const { cycle, pass } = await h.cycleAndPass({ runs: [a.id, b.id, staging.id] });
    expect(cycle.planned).toBe(3);
    expect(pass.sent).toBe(2);
    // Whichever development attempt went first was refused; the other was never sent.
    const devAttempts = h.attempts().filter((x) => x.recordId !== staging.id);
    expect(devAttempts.map((x) => x.outcome).sort()).toEqual(['suspended', 'withdrawn']);
    expect(devAttempts.find((x) => x.outcome === 'withdrawn')).toMatchObject({
      sendCount: 0,
      outcomeDetail: 'never sent: environment_paused',
    });
    expect([...retriesOf(a.id), ...retriesOf(b.id)]).toMatchObject([{ status: 403 }]);
    expect(retriesOf(staging.id)).toMatchObject([{ status: 200 }]);
  });

  it('apps outside any environment are a scope of their own', async () => {
    h = await Harness.start(
      `
enabled: true
dry_run: false
policies:
  - { name: retry-any, action: runs.retry, match: { step: check } }
`,
      { token: STAGING_ONLY_TOKEN },
    );
    // A production app taken out of its environment.
    const loose = appOf(h.sim, 'production');
    h.sim.control.state.apps.get(loose)!.envType = null;
    const outside = failedRun(loose);
    await h.cycleAndPass({ runs: [outside.id] });
    expect(watchdogAlerts()).toMatchObject([
      {
        fingerprint: 'watchdog/remediation/retry-any/no-environment',
        summary:
          'Remediation policy retry-any paused for apps outside any environment: the service refused runs.retry with access_denied',
        labels: { environment: 'none' },
      },
    ]);

    // Development is not covered by that pause: it is tried, refused, and paused on its own.
    const dev = failedRun(appOf(h.sim, 'development'));
    const staging = failedRun(appOf(h.sim, 'staging'));
    const { cycle } = await h.cycleAndPass({ runs: [outside.id, dev.id, staging.id] });
    expect(cycle).toMatchObject({ planned: 2, skipped: { environment_paused: 1 } });
    expect(retriesOf(dev.id)).toMatchObject([{ status: 403 }]);
    expect(retriesOf(staging.id)).toMatchObject([{ status: 200 }]);
    expect(
      watchdogAlerts()
        .map((x) => x.fingerprint)
        .sort(),
    ).toEqual([
      'watchdog/remediation/retry-any/environment/development',
      'watchdog/remediation/retry-any/no-environment',
    ]);
  });
});

describe('refusals that reach the whole policy', () => {
  it.each(['writes_disabled', 'plan_required'] as const)('%s in staging suspends development too', async (code) => {
    h = await Harness.start(SECTION);
    const staging = failedRun(appOf(h.sim, 'staging'));
    h.sim.control.setFault('runs.retry', { errorCode: code, times: 1 });
    await h.cycleAndPass({ runs: [staging.id] });

    const dev = failedRun(appOf(h.sim, 'development'));
    const { cycle } = await h.cycleAndPass({ runs: [staging.id, dev.id] });
    expect(cycle.skipped).toEqual({ policy_suspended: 2 });
    expect(retriesOf(dev.id)).toEqual([]);
    expect(watchdogAlerts()).toMatchObject([
      {
        fingerprint: 'watchdog/remediation/retry-nonprod',
        summary: `Remediation policy retry-nonprod suspended: the service refused runs.retry with ${code}`,
        labels: { check: 'watchdog', source: 'remediation', policy: 'retry-nonprod' },
      },
    ]);
    expect(h.audit().find((a) => a.decision === 'suspended')).toMatchObject({
      environment: 'staging',
      reason: `${code}: suspended in every environment`,
    });
  });
});
