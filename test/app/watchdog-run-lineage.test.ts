/**
 * Run lineage, end to end against the simulator (issue 22, "Run lineage"): a retry restarts a
 * failed run from the step that failed under the same id (reference §4), and its failed_runs
 * alert follows it, whoever retried it — a person (runs.retry through the API), the service's own
 * automatic retry, or our remediation policy. While the run runs again the alert stays open and
 * says so; the run's own success resolves it saying why; a failure of the retry escalates the same
 * alert; a failure the retried run superseded is never announced in its place.
 */
import { describe, expect, it } from 'vitest';
import type { AlertRow } from '../../src/alerts/alert-store.js';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { listAttempts } from '../../src/remediation/remediation-store.js';
import { apiPost } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const engine = engineHarness({ seed: 3 });
const ONLY_RUNS = 'jobs: { urls: "off", backups: "off", attention: "off", maintenance: "off" }';

/** The open failed_runs alert about run `id`, if any. */
function alertOf(wd: Watchdog, id: number): AlertRow | undefined {
  return alertStoreOf(wd.store)
    .open()
    .find((a) => a.fingerprint === `failed_runs/run/${id}`);
}

/** The kinds of events written about run `id`'s failed_runs alert, oldest first. */
function kindsOf(wd: Watchdog, id: number): string[] {
  return eventsOf(wd, `failed_runs/run/${id}`)
    .filter((e) => e.fingerprint === `failed_runs/run/${id}`)
    .map((e) => e.kind);
}

/** A person retries run `id` through the API (runs.retry), as the reference's change does. */
async function retryByHand(id: number): Promise<void> {
  const answer = await apiPost(engine.sim, `/runs/${id}/retry`, {});
  expect(answer.status).toBe(200);
  expect(answer.body.data).toMatchObject({ state: 'started', run_id: id });
}

/** An app of `environment` none of whose runs failed or is under way (its failures are the test's alone). */
function quietApp(environment: 'production' | 'staging'): number {
  const state = engine.sim.control.state;
  const busy = new Set([...state.runs.values()].filter((r) => r.state !== 'done').map((r) => r.appId));
  const app = [...state.apps.values()].find((a) => a.envType === environment && !busy.has(a.id));
  if (!app) throw new Error(`no quiet ${environment} app`);
  return app.id;
}

/**
 * A failed update (step restart: x) of `appId`, by default a quiet production app, told by one
 * cycle of the runs job.
 */
async function toldFailure(wd: Watchdog, appId = quietApp('production'), failedStep = 'restart') {
  const run = engine.sim.control.addRun({ appId, action: 'update', state: 'error', failedStep, reason: 'x' });
  await wd.runOnce(['runs']);
  expect(kindsOf(wd, run.id)).toEqual(['firing']);
  return { appId, run };
}

describe('a failed run retried by a person', () => {
  it('succeeds: the alert stays open while it runs, then resolves saying it succeeded after a retry', async () => {
    const { clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const { run } = await toldFailure(wd);

    clock.advance(MINUTE);
    await retryByHand(run.id);
    await wd.runOnce(['runs']);
    // Running again: still open, says so, and nobody hears a word.
    const open = alertOf(wd, run.id);
    expect(open?.status).toBe('firing');
    expect(open?.summary).toMatch(
      /failed at step restart: x; retrying since \d{4}-\d\d-\d\d \d\d:\d\d UTC, step restart$/,
    );
    expect(open?.details).toMatchObject({ state: 'running', retry_step: 'restart' });
    expect(kindsOf(wd, run.id)).toEqual(['firing']);

    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, run.id)).toEqual(['firing', 'resolved']);
    expect(resolutionOf(wd, `failed_runs/run/${run.id}`)).toBe(`run #${run.id} succeeded after a retry`);
    // Over, it says what failed, not the retry it was running: in its event and its row alike.
    const resolved = wd.store.db
      .prepare(`SELECT payload FROM events WHERE fingerprint = ? AND kind = 'resolved'`)
      .get(`failed_runs/run/${run.id}`) as { payload: string };
    const event = JSON.parse(resolved.payload) as { summary: string; details: Record<string, string> };
    expect(event.summary).toMatch(/failed at step restart: x$/);
    expect(Object.values(event.details).join(' ')).not.toContain('failed at step');
    expect(alertStoreOf(wd.store).get(`failed_runs/run/${run.id}`)?.summary).toBe(event.summary);
  });

  it('fails again: the same alert escalates, no new alert', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const appId = quietApp('production');
    const run = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', reason: 'x' });
    await wd.runOnce(['runs']);

    sim.control.failNextRun({ appId, action: 'update', step: 'restart', reason: 'disk full' });
    clock.advance(MINUTE);
    await retryByHand(run.id);
    await wd.runOnce(['runs']);
    expect(alertOf(wd, run.id)?.summary).toContain('retrying since');

    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, run.id)).toEqual(['firing', 'escalated']);
    const escalated = alertOf(wd, run.id);
    expect(escalated?.summary).toMatch(/failed again after a retry at step restart: disk full$/);
    expect(escalated?.details).toMatchObject({ retries: '1', reason: 'disk full' });
    // No other alert of the app was announced in its place.
    const ofApp = alertStoreOf(wd.store)
      .open()
      .filter((a) => a.check === 'failed_runs' && a.details.app_id === String(appId));
    expect(ofApp.map((a) => a.fingerprint)).toEqual([`failed_runs/run/${run.id}`]);

    // Seen again, failed as it is: no second escalation.
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, run.id)).toEqual(['firing', 'escalated']);
  });
});

describe("the service's own automatic retry", () => {
  it('retrying, then running, then done within the grace: nothing announced, nothing resolved', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const appId = quietApp('staging');
    const run = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', retrying: true });
    await wd.runOnce(['runs']);
    expect(alertOf(wd, run.id)?.status).toBe('pending');

    // The service retries it 10 minutes later: the same run, running again.
    clock.advance(10 * MINUTE + 5_000);
    await wd.runOnce(['runs']);
    expect(sim.control.state.runs.get(run.id)?.state).toBe('running');
    expect(alertOf(wd, run.id)).toMatchObject({ status: 'pending', details: { state: 'running' } });

    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs']);
    expect(sim.control.state.runs.get(run.id)?.state).toBe('done');
    expect(alertOf(wd, run.id)).toBeUndefined();
    expect(kindsOf(wd, run.id)).toEqual([]);
  });

  it('endless automatic retries alert once the grace is over, once; giving up escalates', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const appId = quietApp('staging');
    const run = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', retrying: true });
    // Each automatic retry fails again, and the service means to retry it again: updated_at moves
    // at every retry, so a grace counted from it would never end.
    let fedFor: number | null = null;
    const cycle = async (reason: string, retrying: boolean) => {
      await wd.runOnce(['runs']);
      const rec = sim.control.state.runs.get(run.id)!;
      if (rec.retrying && rec.autoRetryAt !== fedFor) {
        fedFor = rec.autoRetryAt;
        sim.control.failNextRun({ appId, action: 'update', step: 'restart', reason, retrying });
      }
      clock.advance(MINUTE);
    };
    const firstSeen = clock.now();
    let firedAt: number | null = null;
    for (let minute = 0; minute <= 45; minute++) {
      await cycle('flaky', true);
      if (firedAt === null && kindsOf(wd, run.id).includes('firing')) firedAt = clock.now() - MINUTE;
    }
    expect(firedAt).not.toBeNull();
    expect(firedAt! - firstSeen).toBeLessThanOrEqual(30 * MINUTE);
    expect(kindsOf(wd, run.id)).toEqual(['firing']);
    expect(alertOf(wd, run.id)?.summary).toMatch(/flaky/);

    // The service gives up: a later retry fails for good.
    for (let minute = 0; minute < 25; minute++) await cycle('gave up', false);
    expect(kindsOf(wd, run.id)).toEqual(['firing', 'escalated']);
    expect(alertOf(wd, run.id)?.summary).toMatch(/failed again after a retry at step restart: gave up$/);
  });
});

describe('two failures of one app and action', () => {
  it('the newer retried: the older, which it superseded, is never announced', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const appId = quietApp('production');
    const older = sim.control.addRun({
      appId,
      action: 'update',
      state: 'error',
      failedStep: 'restart',
      reason: 'old',
      startedAgoMs: 60 * MINUTE,
    });
    const newer = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', reason: 'new' });
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, newer.id)).toEqual(['firing']);

    clock.advance(MINUTE);
    await retryByHand(newer.id);
    await wd.runOnce(['runs']);
    expect(alertOf(wd, newer.id)?.summary).toContain('retrying since');

    clock.advance(5 * MINUTE);
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, newer.id)).toEqual(['firing', 'resolved']);
    expect(kindsOf(wd, older.id)).toEqual([]);
  });
});

describe('a newer run of the same app and action fails too', () => {
  it('the older alert ends saying the failure goes on in the newer one, never as if it were over', async () => {
    const { clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const { appId, run: older } = await toldFailure(wd);

    clock.advance(MINUTE);
    const { run: newer } = await toldFailure(wd, appId, 'update_modules');
    expect(kindsOf(wd, older.id)).toEqual(['firing', 'resolved']);
    expect(resolutionOf(wd, `failed_runs/run/${older.id}`)).toBe(
      `not over: a newer update (run #${newer.id}) failed too, and its own alert carries the failure on`,
    );
  });
});

describe('a failed run now in a state word no list names', () => {
  it('is not taken for over: the alert stays open as told, saying so, and nothing is sent', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(ONLY_RUNS);
    const { run } = await toldFailure(wd);

    // The service's retry may show a word of its own ("paused", "pending"): the reference leaves them open.
    sim.control.setFault('runs.list', { recordField: { id: run.id, field: 'state', value: 'paused' } });
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect(alertOf(wd, run.id)?.summary).toMatch(
      /failed at step restart: x; now in state "paused", which no state list names: held, not resolved$/,
    );
    expect(kindsOf(wd, run.id)).toEqual(['firing']);

    sim.control.clearFaults();
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect(alertOf(wd, run.id)?.summary).toMatch(/failed at step restart: x$/);
    expect(kindsOf(wd, run.id)).toEqual(['firing']);
  });
});

describe('retried by our remediation policy', () => {
  it('the alert follows the run it retried; a failed retry escalates it, as the outcome notice says', async () => {
    const { sim, clock } = engine;
    const wd = engine.watchdog(
      [
        ONLY_RUNS,
        'remediation:',
        '  enabled: true',
        '  dry_run: false',
        '  policies:',
        '    - { name: retry-staging, action: runs.retry, match: { environment_type: staging }, max_attempts: 1 }',
      ].join('\n'),
    );
    const appId = quietApp('staging');
    const run = sim.control.addRun({ appId, action: 'update', state: 'error', failedStep: 'restart', reason: 'x' });
    await wd.runOnce(['runs']);
    sim.control.failNextRun({ appId, action: 'update', step: 'restart', reason: 'still broken' });
    await wd.remediateOnce();
    expect(sim.control.state.runs.get(run.id)?.state).toBe('running');

    // Running the retry we sent: open, says so; the policy does not send another.
    await wd.runOnce(['runs']);
    expect(alertOf(wd, run.id)?.summary).toContain('retrying since');

    clock.advance(5 * MINUTE);
    await wd.remediateOnce();
    expect(listAttempts(wd.store)).toMatchObject([
      { outcome: 'run_failed', outcomeDetail: 'Retried automatically: failed at step restart: still broken' },
    ]);
    await wd.runOnce(['runs']);
    expect(kindsOf(wd, run.id)).toEqual(['firing', 'escalated']);
    expect(alertOf(wd, run.id)?.summary).toMatch(/failed again after a retry at step restart: still broken$/);
    expect(listAttempts(wd.store)).toHaveLength(1);
  });
});
