/**
 * A silence in force holds the automatic moves on the alerts it mutes (`remediation.during_silence:
 * hold`, the default), against the simulator over loopback: the held decision is in the audit once,
 * naming the silence, its author, its end and its reason; when the silence ends (or is ended by
 * hand) with the alert still firing, the policy decides again as for a new alert. A silence not yet
 * started, or about another app, holds nothing; `during_silence: act` acts as before; a person's
 * request on a silenced alert acts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSilence, expireSilence } from '../../src/alerts/silences.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { appOf, Harness, HOUR, MINUTE, type HarnessOptions } from './remediation-fixture.js';

let h: Harness;
afterEach(() => h?.close());

const RETRY = (extra = '') => `
enabled: true
dry_run: false
${extra}
policies:
  - { name: retry-nonprod, action: runs.retry, match: { environment_type: [staging, development] }, max_attempts: 2, backoff: 10m }
`;
const ALICE = 'slack:alice (U0ALICE)';

/** A failed update run of a free staging app, and its app's name. */
function failedRun() {
  const appId = appOf(h.sim, 'staging');
  const run = h.sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'update_modules' });
  return { run, app: h.sim.control.state.apps.get(appId)!.name };
}

/** A silence of one app's alerts by alice, from `startsAt` (now unless given) for `durationMs`. */
function silenceApp(app: string, durationMs: number, startsAt?: number) {
  return createSilence(h.store, {
    matchers: [{ name: 'app', op: '=', value: app }],
    ...(startsAt === undefined ? {} : { startsAt }),
    durationMs,
    reason: 'deploy in progress\nback by four',
    createdBy: 'alice',
    now: h.clock.now(),
  });
}

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  const start = (section: string, options: Omit<HarnessOptions, 'dir' | 'state' | 'backend'> = {}) =>
    Harness.start(section, { ...options, backend });

  it.each([
    ['its end passes', 'end'],
    ['someone ends it (unsilence)', 'unsilence'],
  ])('a failed run silenced before it fires is held, said once; when %s, it is retried once', async (_what, how) => {
    h = await start(RETRY());
    const { run, app } = failedRun();
    const silence = silenceApp(app, 2 * HOUR);

    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 0, skipped: { silenced: 1 } });
    await h.pass();
    h.clock.advance(10 * MINUTE);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toEqual([]);
    const until = new Date(silence.endsAt).toISOString().replace('.000Z', 'Z');
    // Once, however many cycles it holds; the reason is one line.
    expect(h.audit()).toMatchObject([
      {
        decision: 'skipped',
        reason: `held: silenced by alice until ${until} (${silence.id}): deploy in progress back by four`,
        recordId: run.id,
      },
    ]);
    expect(await h.metric({ policy: 'retry-nonprod', action: 'runs.retry', outcome: 'skipped' })).toBe(1);

    if (how === 'end') h.clock.advance(2 * HOUR);
    else expireSilence(h.store, silence.id, h.clock.now(), { by: 'alice' });
    expect((await h.cycleAndPass({ runs: [run.id] })).cycle.planned).toBe(1);
    const key = `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`;
    expect(h.changes('runs.retry')).toEqual([{ key, status: 200 }]);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toHaveLength(1);
  });

  it('a silence planned ahead holds nothing before its start, and holds from it', async () => {
    h = await start(RETRY());
    const { run, app } = failedRun();
    const window = silenceApp(app, HOUR, h.clock.now() + HOUR);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toHaveLength(1);

    // The retry fails again once the window has started: the second attempt is held.
    h.clock.advance(HOUR);
    h.sim.control.setRunState(run.id, { state: 'error', failedStep: 'update_modules', reason: 'boom again' });
    await h.pass();
    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 0, skipped: { backoff_pending: 1 } });
    h.clock.advance(10 * MINUTE);
    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 0, skipped: { silenced: 1 } });
    expect(h.audit().at(-1)).toMatchObject({ decision: 'skipped', reason: expect.stringContaining(`(${window.id})`) });
    await h.pass();
    expect(h.changes('runs.retry')).toHaveLength(1);
  });

  it('a silence of another app holds nothing on this one', async () => {
    h = await start(RETRY());
    const { run } = failedRun();
    silenceApp(h.sim.control.state.apps.get(appOf(h.sim, 'development'))!.name, HOUR);
    expect(await h.cycle({ runs: [run.id] })).toMatchObject({ planned: 1 });
    await h.pass();
    expect(h.changes('runs.retry')).toHaveLength(1);
  });

  it('with during_silence: act, a silenced alert is acted on as before', async () => {
    h = await start(RETRY('during_silence: act'));
    const { run, app } = failedRun();
    silenceApp(app, HOUR);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.changes('runs.retry')).toEqual([
      { key: `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`, status: 200 },
    ]);
  });

  it('in dry run, a held decision is recorded as held, not as what it would send', async () => {
    h = await start(RETRY().replace('dry_run: false', 'dry_run: true'));
    const { run, app } = failedRun();
    const silence = silenceApp(app, HOUR);
    await h.cycleAndPass({ runs: [run.id] });
    expect(h.audit()).toMatchObject([
      {
        decision: 'skipped',
        reason: expect.stringMatching(new RegExp(`^held: silenced by alice .*\\(${silence.id}\\)`)),
      },
    ]);
    h.clock.advance(HOUR);
    await h.cycle({ runs: [run.id] });
    expect(h.audit().map((a) => a.decision)).toEqual(['skipped', 'dry_run']);
  });

  it("a person's request on a silenced alert acts: a person is deciding", async () => {
    h = await start(RETRY());
    const { run, app } = failedRun();
    silenceApp(app, HOUR);
    await h.cycle({ runs: [run.id] });
    expect(h.changes('runs.retry')).toEqual([]);
    const key = `dw-${h.installation}.1-retry-nonprod-run${run.id}-a1`;
    expect(h.remediator.request(`failed_runs/run/${run.id}`, ALICE, h.clock.now())).toMatchObject({
      outcome: 'planned',
      key,
    });
    await h.pass();
    expect(h.changes('runs.retry')).toEqual([{ key, status: 200 }]);
  });
});
