/**
 * A check switched off by configuration: its open alerts are closed without a word (no event, no
 * notification), whether the change comes with a restart (`check`, `run`) or a reload; a pending
 * one is forgotten. Nothing is closed while the check stays on.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { engineHarness, eventsOf, MINUTE } from './fixtures.js';

const engine = engineHarness();

/** The kinds of the events written for exactly this fingerprint. */
const kindsOf = (wd: Watchdog, fingerprint: string) =>
  eventsOf(wd, fingerprint)
    .filter((e) => e.fingerprint === fingerprint)
    .map((e) => e.kind);

/** Stages one problem and answers the fingerprint of its alert. */
type Stage = () => string;

const failedRun: Stage = () =>
  `failed_runs/run/${engine.sim.control.addRun({ appId: 3, action: 'update', state: 'error', reason: 'x' }).id}`;
const publicCheck: Stage = () => {
  const url = [...engine.sim.control.state.urls.values()][0]!;
  engine.sim.control.checks.url_checks.fail(url.id, 'http_502');
  return `attention/public_check_failed/url/id/${url.id}`;
};

/** What the case is, its job, how it is staged, the config that switches it off, the reason, the config before. */
const cases: [string, 'runs' | 'attention', Stage, string, string, string?][] = [
  [
    'a check disabled in a job still on',
    'runs',
    failedRun,
    'checks: { failed_runs: { enabled: false } }',
    'check disabled by configuration',
  ],
  ['a job set "off"', 'runs', failedRun, 'jobs: { runs: "off" }', 'job switched off by configuration'],
  [
    'an attention rule ignored',
    'attention',
    publicCheck,
    'checks: { attention: { ignore_rules: [public_check_failed] } }',
    'attention rule ignored by configuration',
    // Fired at once, not after waiting for url_checks to report the same URL (which never runs here).
    'checks: { attention: { fold_wait: 0s } }',
  ],
];

describe('alerts of a check switched off by configuration', () => {
  it.each(cases)('%s: closed at the next start, without an event', async (_what, job, stage, off, reason, on) => {
    const first = engine.watchdog(on);
    const fingerprint = stage();
    await first.runOnce([job]);
    expect(alertStoreOf(first.store).get(fingerprint)?.status).toBe('firing');
    await engine.close(first);

    engine.clock.advance(MINUTE);
    const second = engine.watchdog(off);
    await second.runOnce();
    const alert = alertStoreOf(second.store).get(fingerprint);
    expect(alert).toMatchObject({ status: 'resolved', resolvedAt: engine.clock.now() });
    expect(alert?.details.closed).toBe(reason);
    expect(kindsOf(second, fingerprint)).toEqual(['firing']);
    const queued = second.store.db
      .prepare('SELECT COUNT(*) AS n FROM outbox WHERE fingerprint = ?')
      .get(fingerprint) as { n: number };
    expect(queued.n).toBe(1);
  });

  it.each(cases)('%s: closed on reload, without an event', async (_what, job, stage, off, reason, on) => {
    const wd = engine.watchdog(on);
    const fingerprint = stage();
    await wd.runOnce([job]);
    engine.clock.advance(MINUTE);
    await wd.reload(engine.config(off));
    expect(alertStoreOf(wd.store).get(fingerprint)?.details.closed).toBe(reason);
    expect(kindsOf(wd, fingerprint)).toEqual(['firing']);
  });

  it('forgets a pending alert of a disabled check, and leaves the alerts of checks still on alone', async () => {
    const wd = engine.watchdog('alerts: { for: 2 }');
    const fired = failedRun();
    const stuck = `stuck_runs/run/${engine.sim.control.addRun({ appId: 4, state: 'running', startedAgoMs: 3 * 3_600_000 }).id}`;
    await wd.runOnce(['runs']);
    engine.clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    const pending = `failed_runs/run/${engine.sim.control.addRun({ appId: 5, action: 'update', state: 'error', reason: 'y' }).id}`;
    engine.clock.advance(MINUTE);
    await wd.runOnce(['runs']);
    expect([fired, stuck, pending].map((fp) => alertStoreOf(wd.store).get(fp)?.status)).toEqual([
      'firing',
      'firing',
      'pending',
    ]);

    await wd.reload(engine.config('alerts: { for: 2 }\nchecks: { failed_runs: { enabled: false } }'));
    expect(alertStoreOf(wd.store).get(fired)?.details.closed).toBe('check disabled by configuration');
    expect(alertStoreOf(wd.store).get(pending)).toBeUndefined();
    expect(alertStoreOf(wd.store).get(stuck)?.status).toBe('firing');
    expect(kindsOf(wd, stuck)).toEqual(['firing']);
    expect(kindsOf(wd, fired)).toEqual(['firing']);
  });
});
