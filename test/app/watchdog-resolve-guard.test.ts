/**
 * The resolve guard against the simulator: a service that suddenly answers without the problems it
 * had (here, another service answering at the same address: a complete answer, read whole, that
 * holds none of them) resolves nothing at first, says so in the log and the metrics, and resolves
 * once the next cycle says the same.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, engineConfig, eventsOf, manualSim, MINUTE, tempDir } from './fixtures.js';

let first: RunningSimulator;
let other: RunningSimulator;
let clock: ManualClock;
let tmp: ReturnType<typeof tempDir>;
const opened: Watchdog[] = [];

beforeEach(async () => {
  ({ sim: first, clock } = await manualSim({ apps: 20, seed: 4 }));
  other = await startSimulator({ apps: 20, seed: 4, clock });
  tmp = tempDir();
});
afterEach(async () => {
  for (const wd of opened.splice(0)) await wd.stop(1_000);
  await first.close();
  await other.close();
  tmp.cleanup();
});

const JOBS = 'jobs: { maintenance: "off", servers: "off", urls: "off", backups: "off", attention: "off" }';

function open(sim: RunningSimulator, metrics: Metrics, log = captureLogger('info')) {
  const wd = Watchdog.open({ config: engineConfig(sim, tmp.dir, JOBS), clock, logger: log.logger, metrics });
  opened.push(wd);
  return { wd, log };
}

describe('resolve guard', () => {
  it('holds the resolution of every failed run when an answer suddenly has none of them, then resolves on confirmation', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const apps = [...first.control.state.apps.values()].filter((a) => a.state === 'running').slice(0, 6);
    for (const app of apps)
      first.control.addRun({ appId: app.id, action: 'update', state: 'error', reason: 'guard: failed' });
    const before = open(first, metrics);
    await before.wd.runOnce();
    const firing = eventsOf(before.wd, 'failed_runs/').filter((e) => e.kind === 'firing');
    expect(firing.length).toBeGreaterThanOrEqual(6);
    await before.wd.stop(1_000);
    opened.splice(0);

    // Same state file, an answer without those runs.
    const after = open(other, metrics);
    clock.advance(MINUTE);
    const held = await after.wd.runOnce();
    expect(held.complete).toBe(true);
    expect(eventsOf(after.wd, 'failed_runs/').filter((e) => e.kind === 'resolved')).toEqual([]);
    const warning = after.log.lines().find((l) => String(l.msg).includes('would resolve at once'));
    expect(warning).toMatchObject({ level: 40, job: 'runs', suspectCycles: 1, confirmCycles: 2 });
    expect(await metrics.render()).toMatch(
      new RegExp(`deploy_watchdog_resolutions_held\\{source="runs"\\} ${warning!.resolving}`),
    );

    clock.advance(MINUTE);
    await after.wd.runOnce();
    const resolved = eventsOf(after.wd, 'failed_runs/').filter((e) => e.kind === 'resolved');
    expect(resolved.map((e) => e.fingerprint).sort()).toEqual(firing.map((e) => e.fingerprint).sort());
    expect(after.log.text()).toContain('confirmed by 2 consecutive cycles');
    expect(await metrics.render()).toMatch(/deploy_watchdog_resolutions_held\{source="runs"\} 0/);
  });
});
