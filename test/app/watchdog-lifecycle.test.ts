/**
 * The proof, end to end against the simulator: collectors → detectors → lifecycle → outbox,
 * with one ManualClock shared by the simulator and the engine.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { engineConfig, eventsOf, manualSim, MINUTE, openWatchdog, tempDir } from './fixtures.js';

let sim: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
const open: Watchdog[] = [];

beforeEach(async () => {
  ({ sim, clock } = await manualSim());
  tmp = tempDir();
});
afterEach(async () => {
  for (const wd of open.splice(0)) await wd.stop(1_000);
  await sim.close();
  tmp.cleanup();
});

function watchdog(extra = ''): Watchdog {
  const wd = openWatchdog(engineConfig(sim, tmp.dir, extra), clock);
  open.push(wd);
  return wd;
}

/** A failed update on an app of the simulator; returns its fingerprint. */
function failRun(appId = 3): { runId: number; fingerprint: string } {
  const run = sim.control.addRun({
    appId,
    action: 'update',
    state: 'error',
    failedStep: 'build_image',
    reason: 'pip install failed',
  });
  return { runId: run.id, fingerprint: `failed_runs/run/${run.id}` };
}

describe('a failed run through the lifecycle', () => {
  it('fires once, stays quiet while it stays failed, and resolves once when the run succeeds', async () => {
    const wd = watchdog();
    const { runId, fingerprint } = failRun();

    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);

    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      await wd.runOnce(['runs']);
    }
    expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);

    sim.control.setRunState(runId, { state: 'done' });
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing', 'resolved']);
    // The outbox got both, for the log channel.
    const queued = wd.store.db.prepare(`SELECT COUNT(*) AS n FROM outbox WHERE fingerprint = ?`).get(fingerprint) as {
      n: number;
    };
    expect(queued.n).toBe(2);
  });

  it('keeps open alerts open through an API outage, sends no resolution, and says "cannot read runs" once past the threshold', async () => {
    const wd = watchdog('checks:\n  sources: { failure_threshold: 2 }');
    const { fingerprint } = failRun();
    await wd.runOnce(['runs']);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

    sim.control.setFault('*', { errorCode: 'internal_error' });
    const outage = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(MINUTE);
      outage.push(await wd.runOnce(['runs']));
    }
    expect(outage.map((r) => r.jobs[0]!.outcome)).toEqual(['failed', 'failed', 'failed']);
    expect(outage[0]!.jobs[0]!.reason).toMatch(/internal_error \(HTTP 500\)/);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');
    expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);
    // Below the threshold nothing; at it one firing; after it nothing more.
    expect(eventsOf(wd, 'watchdog/source/runs').map((e) => e.kind)).toEqual(['firing']);
    const source = alertStoreOf(wd.store).get('watchdog/source/runs')!;
    expect(source.summary).toMatch(/^cannot read runs: .*internal_error/);
    expect(source.labels).toEqual({ check: 'watchdog', source: 'runs' });

    sim.control.clearFaults();
    clock.advance(MINUTE);
    expect((await wd.runOnce(['runs'])).complete).toBe(true);
    expect(eventsOf(wd, 'watchdog/source/runs').map((e) => e.kind)).toEqual(['firing', 'resolved']);
    expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);
    expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');
  });

  it('sees all of 137 failed runs spread over many small pages', async () => {
    await sim.close();
    ({ sim, clock } = await manualSim({ apps: 140 }));
    const wd = watchdog();
    const added = new Set<string>();
    for (let appId = 1; appId <= 137; appId++) added.add(failRun(appId).fingerprint);
    sim.control.resetRequests();

    const report = await wd.runOnce(['runs']);
    expect(report.complete).toBe(true);
    const fired = new Set(
      eventsOf(wd, 'failed_runs/')
        .filter((e) => e.kind === 'firing')
        .map((e) => e.fingerprint),
    );
    expect([...added].filter((f) => !fired.has(f))).toEqual([]);
    // page_size 50: the recent runs alone take several pages.
    const listPages = sim.control.requests().filter((r) => r.fn === 'runs.list').length;
    expect(listPages).toBeGreaterThan(3);
  });

  it('after a restart on the same state file announces nothing again, and a later fix still resolves', async () => {
    const first = watchdog();
    const { runId, fingerprint } = failRun();
    await first.runOnce(['runs']);
    await first.stop(1_000);
    open.splice(open.indexOf(first), 1);

    const second = watchdog();
    clock.advance(MINUTE);
    await second.runOnce(['runs']);
    expect(eventsOf(second, fingerprint).map((e) => e.kind)).toEqual(['firing']);

    sim.control.setRunState(runId, { state: 'done' });
    clock.advance(MINUTE);
    await second.runOnce(['runs']);
    expect(eventsOf(second, fingerprint).map((e) => e.kind)).toEqual(['firing', 'resolved']);
  });

  it.each([
    ['inside the look-back', 0],
    ['itself older than the look-back (found through its app)', 90 * MINUTE],
  ])(
    'keeps a failure older than the look-back firing while runs.get says it failed; a newer success %s resolves it',
    async (_where, successAgoMs) => {
      const wd = watchdog('checks:\n  failed_runs: { lookback: 1h }\n  stuck_runs: { enabled: false }');
      const { runId, fingerprint } = failRun();
      await wd.runOnce(['runs']);
      expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);

      // Two hours on, the run is far outside runs.list's window but still failed.
      for (let i = 0; i < 4; i++) {
        clock.advance(30 * MINUTE);
        expect((await wd.runOnce(['runs'])).complete).toBe(true);
      }
      expect(sim.control.state.runs.get(runId)!.createdAt).toBeLessThan(clock.now() - 60 * MINUTE);
      expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing']);
      expect(alertStoreOf(wd.store).get(fingerprint)?.status).toBe('firing');

      sim.control.addRun({ appId: 3, action: 'update', state: 'done', startedAgoMs: successAgoMs });
      clock.advance(MINUTE);
      await wd.runOnce(['runs']);
      expect(eventsOf(wd, fingerprint).map((e) => e.kind)).toEqual(['firing', 'resolved']);
    },
  );
});
