/**
 * A check switched off by configuration: its open alerts are closed without a word (no event, no
 * notification), whether the change comes with a restart (`check`, `run`) or a reload; a pending
 * one is forgotten. Nothing is closed while the check stays on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getAlert } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import type { ManualClock } from '../../src/lib/clock.js';
import type { RunningSimulator } from '../../src/simulator/index.js';
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

/** The kinds of the events written for exactly this fingerprint. */
const kindsOf = (wd: Watchdog, fingerprint: string) => eventsOf(wd, fingerprint).filter((e) => e.fingerprint === fingerprint).map((e) => e.kind);

function watchdog(extra = ''): Watchdog {
  const wd = openWatchdog(engineConfig(sim, tmp.dir, extra), clock);
  open.push(wd);
  return wd;
}

/** Stages one problem and answers the fingerprint of its alert. */
type Stage = () => string;

const failedRun: Stage = () => `failed_runs/run/${sim.control.addRun({ appId: 3, action: 'update', state: 'error', reason: 'x' }).id}`;
const publicCheck: Stage = () => {
  const url = [...sim.control.state.urls.values()][0]!;
  sim.control.failPublicCheck(url.id, 'http_502');
  return `attention/public_check_failed/url/id/${url.id}`;
};

const cases: [string, 'runs' | 'attention', Stage, string, string][] = [
  ['a check disabled in a job still on', 'runs', failedRun, 'checks: { failed_runs: { enabled: false } }', 'check disabled by configuration'],
  ['a job set "off"', 'runs', failedRun, 'jobs: { runs: "off" }', 'job switched off by configuration'],
  ['an attention rule ignored', 'attention', publicCheck, 'checks: { attention: { ignore_rules: [public_check_failed] } }', 'attention rule ignored by configuration'],
];

describe('alerts of a check switched off by configuration', () => {
  it.each(cases)('%s: closed at the next start, without an event', async (_what, job, stage, off, reason) => {
    const first = watchdog();
    const fingerprint = stage();
    await first.runOnce([job]);
    expect(getAlert(first.store, fingerprint)?.status).toBe('firing');
    await first.stop(1_000);
    open.splice(open.indexOf(first), 1);

    clock.advance(MINUTE);
    const second = watchdog(off);
    await second.runOnce();
    const alert = getAlert(second.store, fingerprint);
    expect(alert).toMatchObject({ status: 'resolved', resolvedAt: clock.now() });
    expect(alert?.details.closed).toBe(reason);
    expect(kindsOf(second, fingerprint)).toEqual(['firing']);
    const queued = second.store.db.prepare('SELECT COUNT(*) AS n FROM outbox WHERE fingerprint = ?').get(fingerprint) as { n: number };
    expect(queued.n).toBe(1);
  });

  it.each(cases)('%s: closed on reload, without an event', async (_what, job, stage, off, reason) => {
    const wd = watchdog();
    const fingerprint = stage();
    await wd.runOnce([job]);
    clock.advance(MINUTE);
    await wd.reload(engineConfig(sim, tmp.dir, off));
    expect(getAlert(wd.store, fingerprint)?.details.closed).toBe(reason);
    expect(kindsOf(wd, fingerprint)).toEqual(['firing']);
  });

  it('forgets a pending alert of a disabled check, and leaves the alerts of checks still on alone', async () => {
    const wd = watchdog('alerts: { for: 2 }');
    const fired = failedRun();
    const stuck = `stuck_runs/run/${sim.control.addRun({ appId: 4, state: 'running', startedAgoMs: 3 * 3_600_000 }).id}`;
    await wd.runOnce(['runs']);
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    const pending = `failed_runs/run/${sim.control.addRun({ appId: 5, action: 'update', state: 'error', reason: 'y' }).id}`;
    clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect([fired, stuck, pending].map((fp) => getAlert(wd.store, fp)?.status)).toEqual(['firing', 'firing', 'pending']);

    await wd.reload(engineConfig(sim, tmp.dir, 'alerts: { for: 2 }\nchecks: { failed_runs: { enabled: false } }'));
    expect(getAlert(wd.store, fired)?.details.closed).toBe('check disabled by configuration');
    expect(getAlert(wd.store, pending)).toBeUndefined();
    expect(getAlert(wd.store, stuck)?.status).toBe('firing');
    expect(kindsOf(wd, stuck)).toEqual(['firing']);
    expect(kindsOf(wd, fired)).toEqual(['firing']);
  });
});
