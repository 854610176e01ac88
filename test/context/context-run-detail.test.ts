/**
 * Announce first, enrich after, through the real daemon: a storm of failures past the runs
 * collector's reads by id is announced from the lists in one cycle; the context reader then reads
 * each of the others by id once (its failed step and reason become a "Failed step" fact of the
 * alert's context), hands the answer to the runs collector, and the next cycle reads none of them
 * again while their `updated_at` stands, its findings saying the step.
 */
import { describe, expect, it } from 'vitest';
import { DETAIL_READS_PER_CYCLE } from '../../src/collectors/collect-runs.js';
import { engineConfig, manualSim, MINUTE, openWatchdog, tempDir } from '../app/fixtures.js';

const STORM = DETAIL_READS_PER_CYCLE + 12;

describe('the details of a storm, after the cycle', () => {
  it('are read by the context reader once each, shown as a fact, and kept for the next cycle', async () => {
    const { sim, clock } = await manualSim({ apps: STORM + 20, seed: 8 });
    const tmp = tempDir();
    const wd = openWatchdog(engineConfig(sim, tmp.dir), clock);
    try {
      await wd.runOnce(['runs']);
      clock.advance(MINUTE);
      await wd.runOnce(['runs']);
      const apps = [...sim.control.state.apps.values()].filter((a) => a.state === 'running' && a.deployedAt !== null);
      const storm = apps
        .slice(0, STORM)
        .map((app) =>
          sim.control.addRun({ appId: app.id, action: 'restart', state: 'error', reason: `boom ${app.id}` }),
        );
      clock.advance(MINUTE);
      sim.control.resetRequests();
      await wd.runOnce(['runs']);
      const byCycle = new Set(readsById(sim));
      expect(byCycle.size).toBe(DETAIL_READS_PER_CYCLE);
      const rest = storm.filter((r) => !byCycle.has(r.id));
      expect(rest).toHaveLength(STORM - DETAIL_READS_PER_CYCLE);

      // After the cycle: the context reader reads the rest by id, once each, and not the others.
      sim.control.resetRequests();
      await wd.deliverDue();
      await wd.deliverDue();
      expect(readsById(sim).sort()).toEqual(rest.map((r) => r.id).sort());
      for (const run of rest) {
        const row = wd.store.db
          .prepare(`SELECT status, context FROM alert_context WHERE fingerprint = ?`)
          .get(`failed_runs/run/${run.id}`) as { status: string; context: string };
        expect(row.status).toBe('ready');
        const facts = (JSON.parse(row.context) as { facts: { label: string; value: string }[] }).facts;
        expect(facts).toContainEqual({ label: 'Failed step', value: expect.stringContaining(`boom ${run.app_id}`) });
      }

      // The next cycle: none read again, every alert now saying its step's reason.
      clock.advance(MINUTE);
      sim.control.resetRequests();
      await wd.runOnce(['runs']);
      expect(readsById(sim).filter((id) => storm.some((r) => r.id === id))).toEqual([]);
      for (const run of storm) {
        const alert = wd.store.db
          .prepare(`SELECT details FROM alerts WHERE fingerprint = ?`)
          .get(`failed_runs/run/${run.id}`) as { details: string };
        expect(JSON.parse(alert.details)).toMatchObject({ reason: `boom ${run.app_id}` });
      }
    } finally {
      await wd.stop(0);
      await sim.close();
      tmp.cleanup();
    }
  }, 60_000);
});

/** The run ids read by id since the simulator's log was last emptied. */
function readsById(sim: Awaited<ReturnType<typeof manualSim>>['sim']): number[] {
  return sim.control
    .requests()
    .filter((r) => r.fn === 'runs.get')
    .map((r) => Number(r.path.split('/').at(-1)));
}
