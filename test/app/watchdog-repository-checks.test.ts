/**
 * repository_checks, end to end against the simulator: the maintenance job raises one warning when
 * the platform has stopped reading an app's repository (staged through the simulator's
 * `checks.repository_checks`), from the `apps.get` it makes anyway, and resolves it when the
 * repository is read again. The repositories the platform keeps reading stay quiet however long
 * the session; a `checked_at` nobody can parse sets its app aside and blinds no other.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { simControl } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const HOUR = 60 * MINUTE;
// A simulator and a store of their own per test; the harness stops each test's Watchdog.
const h = engineHarness();

/** Running deployed production apps of the seed whose repositories the platform reads. */
function productionApps(): { id: number; name: string; repository: string }[] {
  return [...h.sim.control.state.apps.values()]
    .filter(
      (a) =>
        a.state === 'running' &&
        a.envType === 'production' &&
        a.deployedAt !== null &&
        a.repositories.length > 0 &&
        a.repositories.every((r) => !r.deletedUpstream),
    )
    .map((a) => ({
      id: a.id,
      name: a.name,
      repository: (a.repositories.find((r) => r.main) ?? a.repositories[0]!).repository,
    }));
}

/** Stages a repository's reads over the simulator's control interface, as an out-of-process test would. */
/** The check is off by default (the platform's cadence of reading repositories is not documented). */
const ON = 'checks: { repository_checks: { enabled: true } }';

async function stage(operation: 'stop' | 'resume', appId: number, options: Record<string, unknown>): Promise<void> {
  const answer = await simControl(h.sim, `checks.repository_checks.${operation}`, [appId, options]);
  expect(answer.status, answer.text).toBe(200);
}

describe('a repository the platform stopped reading', () => {
  it('fires one warning from apps.get alone, none for the others after days, and resolves once read again', async () => {
    const w = h.watchdog(ON);
    const [app] = productionApps();
    expect(app, 'a running production app').toBeDefined();
    const fp = `repository_checks/${app!.id}/${app!.repository}`;
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, 'repository_checks/')).toEqual([]);
    await stage('stop', app!.id, { hoursAgo: 50 });
    // Three days on: the repositories still read are fresh, the stopped one three days older.
    h.clock.advance(3 * 24 * HOUR);
    h.sim.control.resetRequests();
    expect((await w.runOnce(['maintenance'])).complete).toBe(true);
    expect(new Set(h.sim.control.requests().map((r) => r.fn))).toEqual(new Set(['apps.list', 'apps.get']));
    expect(eventsOf(w, 'repository_checks/')).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(w.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'warning',
      labels: { check: 'repository_checks', app: app!.name, repository: app!.repository },
      details: { max_age: '2d', unread_for: '5d 2h' },
    });

    h.clock.advance(MINUTE);
    await stage('resume', app!.id, { repository: app!.repository });
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, 'repository_checks/')).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(w, fp)).toMatch(new RegExp(`^${app!.repository} read by the platform at `));
  });

  it('holds the app whose checked_at cannot be read, and still reports the others', async () => {
    const w = h.watchdog(ON);
    const [odd, stale] = productionApps();
    await stage('stop', stale!.id, { hoursAgo: null });
    h.sim.control.setFault('apps.get', {
      recordField: { field: 'repositories.0.checked_at', value: 'sometime yesterday', id: odd!.id },
    });
    const report = await w.runOnce(['maintenance']);
    const job = report.jobs.find((j) => j.job === 'maintenance')!;
    expect(job.skipped).toEqual([expect.objectContaining({ kind: 'app', id: odd!.id, reason: 'unreadable' })]);
    expect(eventsOf(w, 'repository_checks/')).toEqual([
      { kind: 'firing', fingerprint: `repository_checks/${stale!.id}/${stale!.repository}` },
    ]);
    expect(alertStoreOf(w.store).get(`repository_checks/${stale!.id}/${stale!.repository}`)?.summary).toBe(
      `The platform has never read ${stale!.repository}, deployed on ${stale!.name} (production)`,
    );
  });

  it('is off by default: nothing is looked for', async () => {
    const w = h.watchdog();
    const [app] = productionApps();
    await stage('stop', app!.id, { hoursAgo: 100 });
    await w.runOnce(['maintenance']);
    expect(eventsOf(w, 'repository_checks/')).toEqual([]);
  });
});
