/**
 * A remediation asked for by a person (the Slack app's Retry now), against the simulator over
 * loopback: a policy with `automatic: false` waits for the request, then acts once with a stored
 * key through the same send loop; a second request while it is under way, or once its attempts
 * are used up, plans nothing and says why; a dry run records the key it would send and sends
 * nothing; an automatic policy answers the same way; every request is in the audit with who asked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { appOf, Harness, MINUTE } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const ON_REQUEST = `
enabled: true
dry_run: false
policies:
  - { name: retry-asked, action: runs.retry, match: { environment_type: staging }, automatic: false, max_attempts: 1, backoff: 10m }
`;
const ALICE = 'slack:alice (U0ALICE)';

function failedRun(appId: number) {
  return h.sim.control.addRun({
    appId,
    action: 'update',
    state: 'error',
    failedStep: 'update_modules',
    reason: 'boom',
  });
}

describe('a policy on request only', () => {
  it('waits for a person, acts once when asked, and a second request changes nothing and says why', async () => {
    h = await Harness.start(ON_REQUEST);
    const run = failedRun(appOf(h.sim, 'staging'));
    const fingerprint = `failed_runs/run/${run.id}`;

    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 0, skipped: { not_automatic: 1 } });
    expect(h.remediator.offer(fingerprint)).toBe('Retry now');

    const key = `dw-${h.installation}.1-retry-asked-run${run.id}-a1`;
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({
      outcome: 'planned',
      policy: 'retry-asked',
      key,
      attempt: 1,
      maxAttempts: 1,
    });
    // Asked again before it was sent: the same decision under way.
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({
      outcome: 'skipped',
      reason: 'attempt_in_progress',
    });
    await h.pass();
    expect(h.changes('runs.retry')).toEqual([{ key, status: 200 }]);

    h.clock.advance(10 * MINUTE);
    await h.pass();
    expect(h.attempts()).toMatchObject([{ key, status: 'finished', outcome: 'succeeded' }]);
    // Done, and its one attempt used (the alert resolves at the next cycle): asking again sends nothing.
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({
      outcome: 'skipped',
      reason: 'max_attempts_reached',
    });
    expect(h.changes('runs.retry')).toEqual([{ key, status: 200 }]);
    // The cycle's `not_automatic` skip is counted, not audited: only what was asked and done is.
    expect(h.audit().map((a) => [a.decision, a.reason, a.detail?.startsWith(`asked by ${ALICE}; `) ?? false])).toEqual([
      ['acted', 'attempt 1 of 1', true],
      ['skipped', 'attempt_in_progress', true],
      ['answered', 'change taken', false],
      ['outcome', 'Retried automatically: succeeded', false],
      ['skipped', 'max_attempts_reached', true],
    ]);
    await h.cycle({ runs: [run.id] });
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({ outcome: 'not_firing' });
    expect(h.remediator.offer(fingerprint)).toBeUndefined();
  });

  it('once its attempts are used up on a run still failing, a request says so and sends nothing', async () => {
    h = await Harness.start(ON_REQUEST);
    const run = failedRun(appOf(h.sim, 'staging'));
    const fingerprint = `failed_runs/run/${run.id}`;
    await h.cycle({ runs: [run.id] });
    h.remediator.request(fingerprint, ALICE, h.clock.now());
    await h.pass();
    h.sim.control.setRunState(run.id, { state: 'error', failedStep: 'update_modules', reason: 'boom again' });
    h.clock.advance(MINUTE);
    await h.pass();
    await h.cycle({ runs: [run.id] });
    expect(h.attempts()).toMatchObject([{ status: 'finished', counted: true }]);

    h.clock.advance(20 * MINUTE);
    expect(h.remediator.request(fingerprint, ALICE, h.clock.now())).toMatchObject({
      outcome: 'skipped',
      reason: 'max_attempts_reached',
    });
    await h.pass();
    expect(h.changes('runs.retry')).toHaveLength(1);
  });

  it.each([
    [
      'in dry run: the key it would send, nothing sent',
      'enabled: true\ndry_run: true\npolicies:\n  - { name: retry-asked, action: runs.retry, automatic: false }',
      { outcome: 'dry_run', policy: 'retry-asked' },
    ],
    [
      'remediation off: nothing offered, nothing planned',
      'enabled: false\npolicies:\n  - { name: retry-asked, action: runs.retry, automatic: false }',
      { outcome: 'not_covered' },
    ],
    [
      'no policy covers the alert',
      'enabled: true\ndry_run: false\npolicies:\n  - { name: other, action: runs.retry, match: { app: nothing-like-it } }',
      { outcome: 'not_covered' },
    ],
  ])('%s', async (_what, remediation, expected) => {
    h = await Harness.start(remediation);
    const run = failedRun(appOf(h.sim, 'staging'));
    await h.cycle({ runs: [run.id] });
    expect(h.remediator.request(`failed_runs/run/${run.id}`, ALICE, h.clock.now())).toMatchObject(expected);
    await h.pass();
    expect(h.changes('runs.retry')).toEqual([]);
  });

  it('an unknown alert is not found', async () => {
    h = await Harness.start(ON_REQUEST);
    expect(h.remediator.request('failed_runs/run/999999', ALICE, h.clock.now())).toEqual({ outcome: 'not_found' });
  });
});

describe('an automatic policy, asked', () => {
  it('answers with the decision the cycle took: its attempt is under way', async () => {
    h = await Harness.start(
      'enabled: true\ndry_run: false\npolicies:\n  - { name: retry-auto, action: runs.retry, match: { environment_type: staging } }',
    );
    const run = failedRun(appOf(h.sim, 'staging'));
    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 1 });
    expect(h.remediator.request(`failed_runs/run/${run.id}`, ALICE, h.clock.now())).toMatchObject({
      outcome: 'skipped',
      reason: 'attempt_in_progress',
    });
    await h.pass();
    expect(h.changes('runs.retry')).toHaveLength(1);
  });
});
