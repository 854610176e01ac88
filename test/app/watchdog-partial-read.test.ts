/**
 * A read cut by a hard bound still announces what it read: a list that never ends (cut at
 * `api.max_list_items`) and details that never come (cut at `jobs.read_ceiling`) fire alerts for
 * the failures seen before the cut, and resolve nothing; the read counts as a failed one for the
 * source's health. So does a read whose requests the service still refuses (429) past every retry. `check` says so (outcome partial: exit 1).
 * Details (a new failure's steps, read by id) that do not come in time cut nothing: the failures are
 * told from the lists at once, and their details read the next cycle.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { advancing } from '../faults/fault-fixture.js';
import { engineHarness, eventsOf, openWatchdog } from './fixtures.js';

const h = engineHarness({ apps: 12, seed: 6 });
const opened: Watchdog[] = [];
afterEach(async () => {
  for (const wd of opened.splice(0)) await wd.stop(1_000);
});

/** The daemon's open failed_runs alerts, by fingerprint. */
function firing(wd: Watchdog): string[] {
  return (
    wd.store.db
      .prepare(`SELECT fingerprint FROM alerts WHERE check_name = 'failed_runs' AND status = 'firing' ORDER BY 1`)
      .all() as { fingerprint: string }[]
  ).map((r) => r.fingerprint);
}

/** A failed update of each of `n` apps, one of each, created now: the newest runs of the list. */
function failRuns(n: number, skip = 0): number[] {
  const apps = [...h.sim.control.state.apps.values()].slice(skip, skip + n);
  return apps.map(
    (app) => h.sim.control.addRun({ appId: app.id, action: 'update', state: 'error', startedAgoMs: 1_000 }).id,
  );
}

describe('a read cut by a hard bound', () => {
  it.each([
    {
      // Every list of runs says it holds a billion, its pages full of ids never given: the walk of
      // the recent runs stops at its look-back, the walk of the active ones (read whole) is cut at its
      // first page. What was read is what the service answered: the new failures, under those ids.
      bound: 'a list that never ends, at api.max_list_items',
      fault: ['runs.list', { endlessList: true }] as const,
      // Cut at the first page (the total says too many) or once the walk has read past the bound.
      reason:
        /list too long: (total says 1000000000, more than 1000|more than 1000 items read in one walk \(total says 1000000000\))/,
      announced: (fired: number[], fresh: number[]) =>
        fired.length >= fresh.length && fired.every((id) => id > 900_000_000),
      // None of the runs it knew was listed again before the cut.
      everyOneUnread: true,
    },
    {
      bound: 'details that never come, at jobs.read_ceiling',
      fault: ['runs.get', { hang: true }] as const,
      reason: /the read of runs reached its ceiling of 1m \(jobs\.read_ceiling\) and is incomplete/,
      // The new failures, judged from their list items alone.
      announced: (fired: number[], fresh: number[]) => fresh.every((id) => fired.includes(id)),
      // The list was read whole: its failures were seen again, from their items.
      everyOneUnread: false,
    },
  ])(
    'announces the failures of what it read, and resolves nothing: $bound',
    async ({ fault, reason, announced, everyOneUnread }) => {
      const config = h.config('jobs: { read_ceiling: 1m }');
      const wd = openWatchdog({ ...config, api: { ...config.api, max_list_items: 1_000 } }, h.clock);
      opened.push(wd);
      failRuns(2, 0);
      const first = await advancing(h.clock, wd.runOnce(['runs']), 2_000, 5);
      expect(first.jobs[0]).toMatchObject({ outcome: 'ok' });
      const before = firing(wd);
      expect(before.length).toBeGreaterThanOrEqual(2);
      const resolvedBefore = eventsOf(wd, 'failed_runs/').filter((e) => e.kind === 'resolved').length;

      // Three new failures, the newest runs of the list, and a run under way; then a hostile answer.
      const fresh = failRuns(3, 4);
      h.sim.control.addRun({ appId: [...h.sim.control.state.apps.keys()][8]!, action: 'backup', state: 'running' });
      h.sim.control.setFault(fault[0], fault[1]);
      const report = await advancing(h.clock, wd.runOnce(['runs']), 2_000, 10);
      h.sim.control.clearFaults();

      const [runs] = report.jobs;
      expect(runs, runs!.reason).toMatchObject({ job: 'runs', outcome: 'partial' });
      expect(runs!.reason).toMatch(reason);
      expect(runs!.findings).toBeGreaterThan(0);
      expect(report.complete).toBe(false);
      // Every alert open before is still open: a cut read proves nothing by what it did not see.
      const after = firing(wd);
      expect(after).toEqual(expect.arrayContaining(before));
      expect(eventsOf(wd, 'failed_runs/').filter((e) => e.kind === 'resolved')).toHaveLength(resolvedBefore);
      // The new failures fired from what was read before the cut.
      const fired = after.filter((f) => !before.includes(f)).map((f) => Number(f.split('/').at(-1)));
      expect(announced(fired, fresh), `fired ${fired.join(', ')}; new ${fresh.join(', ')}`).toBe(true);
      const health = wd.store.db
        .prepare(`SELECT consecutive_failures AS n FROM source_health WHERE job = 'runs'`)
        .get() as { n: number };
      expect(health.n).toBe(1);
      // An alert the read did not reach is held, saying why, as a set-aside record's is; without an event.
      const cutNote = /^not read: the read was cut short \(.+\); held, not resolved$/;
      const notes = before.map((fp) => alertStoreOf(wd.store).get(fp)!);
      for (const alert of notes) {
        if (alert.details.held === undefined && !everyOneUnread) continue;
        expect(alert.details.held, alert.fingerprint).toMatch(cutNote);
        expect(alert.facts).toContainEqual({ label: 'Held', value: alert.details.held });
        expect(eventsOf(wd, alert.fingerprint).filter((e) => e.fingerprint === alert.fingerprint)).toHaveLength(1);
      }

      // The next complete reads judge them again (past the resolve guard, when many resolve at
      // once): the note is gone, from those still failing and from those over.
      for (let cycle = 0; cycle < 3; cycle++) {
        h.clock.advance(60_000);
        const next = await advancing(h.clock, wd.runOnce(['runs']), 2_000, 10);
        expect(next.jobs[0]).toMatchObject({ outcome: 'ok' });
      }
      for (const fp of before) expect(alertStoreOf(wd.store).get(fp)!.details.held, fp).toBeUndefined();
    },
  );
});

describe('details not read in time', () => {
  it.each([
    { what: 'refused with 429s past every retry', fault: { rateLimit: { retryAfter: 'none' as const } } },
    { what: 'never answered', fault: { hang: true } },
  ])('tells the new failures from the lists at once, the read complete: details $what', async ({ fault }) => {
    const config = h.config();
    // Details are read by the cycle's start plus api.timeout.
    const wd = openWatchdog({ ...config, api: { ...config.api, timeout: 1_000 } }, h.clock);
    opened.push(wd);
    failRuns(2, 0);
    await advancing(h.clock, wd.runOnce(['runs']), 2_000, 5);
    const before = firing(wd);

    const fresh = failRuns(3, 4);
    // Only the new failures' reads: those of runs that settled since are not details, and decide.
    h.sim.control.setFault('runs.get', { ...fault, ids: fresh });
    const report = await advancing(h.clock, wd.runOnce(['runs']), 2_000, 10);
    h.sim.control.clearFaults();
    expect(report.jobs[0], report.jobs[0]!.reason).toMatchObject({ job: 'runs', outcome: 'ok' });
    const fired = firing(wd).filter((f) => !before.includes(f));
    expect(fired.map((f) => Number(f.split('/').at(-1))).sort()).toEqual([...fresh].sort());
    // Told without their step; the next cycle reads them by id, and their alerts say it.
    for (const fp of fired) expect(alertStoreOf(wd.store).get(fp)!.details.step, fp).toBeUndefined();
    h.clock.advance(60_000);
    expect((await advancing(h.clock, wd.runOnce(['runs']), 2_000, 10)).jobs[0]).toMatchObject({ outcome: 'ok' });
    for (const fp of fired) expect(alertStoreOf(wd.store).get(fp)!.details.step, fp).toBeDefined();
  });
});
