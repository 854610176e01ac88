/**
 * A storm never silences the daemon: 137 runs fail at once, the runs job runs every 2 seconds, the
 * service and the client both allow 10 requests a second, so the read that follows (a runs.get per
 * failed run) takes far longer than the schedule. It runs to its end, every failure is announced,
 * and the ticks it overran are skipped, counted, and said once. Ticks are given by hand, on the
 * ManualClock the simulator and the daemon share.
 */
import { describe, expect, it } from 'vitest';
import type { ScheduleFn } from '../../src/app/scheduler.js';
import { Metrics } from '../../src/lib/metrics.js';
import { captureLogger, engineHarness, openWatchdog } from './fixtures.js';

const STORM = 137;
const h = engineHarness({ apps: STORM + 3, seed: 23, rateLimit: { rps: 10, burst: 10 } });

/** A tick source driven by hand: `tick(job)` is one time of the job's schedule coming. */
function manualTicks() {
  const ticks = new Map<string, () => Promise<void>>();
  const schedule: ScheduleFn = (_expression, tick, options) => {
    ticks.set(options.name.replace('deploy-watchdog:', ''), tick);
    return { stop: async () => undefined };
  };
  return { schedule, tick: (job: string) => void ticks.get(job)?.() };
}

/** The value of a counter or gauge for these labels (0 when never set). */
async function valueOf(metrics: Metrics, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)!.get();
  const row = metric.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return row?.value ?? 0;
}

describe('a storm of failed runs', () => {
  it('is announced in full by a read that overruns its schedule; the ticks it overran are counted, said once', async () => {
    const base = h.config(
      [
        'jobs:',
        '  runs: "*/2 * * * * *"',
        ...['attention', 'urls', 'backups', 'maintenance', 'servers', 'installers'].map((j) => `  ${j}: "off"`),
        '  jitter: 0s',
      ].join('\n'),
    );
    // The daemon's defaults against a service that allows 10 requests a second.
    const config = { ...base, api: { ...base.api, requests_per_second: 10, max_retries: 3 } };
    const ticks = manualTicks();
    const metrics = new Metrics({ processMetrics: false });
    const log = captureLogger('info');
    const wd = openWatchdog(config, h.clock, { schedule: ticks.schedule, metrics, logger: log.logger });
    const cycles = (outcome: string) => valueOf(metrics, 'deploy_watchdog_cycles_total', { source: 'runs', outcome });
    const overruns = () => valueOf(metrics, 'deploy_watchdog_job_overruns_total', { source: 'runs' });

    /** Moves time on, a tick of the runs job every 2 seconds, until `done` says so. */
    const drive = async (done: () => Promise<boolean>) => {
      for (let step = 1; !(await done()); step++) {
        expect(step, 'the storm was not told within 20 minutes of clock time').toBeLessThan(4_800);
        await new Promise((resolve) => setTimeout(resolve, 2));
        h.clock.advance(250);
        if (step % 8 === 0) ticks.tick('runs');
      }
    };

    try {
      await wd.start();
      await drive(async () => (await cycles('ok')) >= 1);
      const quiet = await overruns();

      // The storm: a failed update on each of 137 apps at once.
      const apps = [...h.sim.control.state.apps.values()].slice(0, STORM);
      const storm = apps.map((app) => h.sim.control.addRun({ appId: app.id, action: 'update', state: 'error' }).id);
      const fired = () =>
        (
          wd.store.db
            .prepare(`SELECT fingerprint FROM events WHERE kind = 'firing' AND fingerprint LIKE 'failed_runs/run/%'`)
            .all() as { fingerprint: string }[]
        ).map((r) => Number(r.fingerprint.split('/').at(-1)));
      const startedAt = h.clock.now();
      await drive(async () => {
        const told = new Set(fired());
        return storm.every((id) => told.has(id));
      });
      const tookMs = h.clock.now() - startedAt;

      // Every failure told, by a read that took several of its 2-second slots and was never cut.
      expect(tookMs).toBeGreaterThan(4_000);
      expect(await cycles('failed')).toBe(0);
      expect(await cycles('partial')).toBe(0);
      const skipped = (await overruns()) - quiet;
      expect(skipped).toBeGreaterThanOrEqual(2);
      // Said once per overrun, never more often than ticks were skipped. How many ticks one overrun
      // spans depends on how far the clock moves while the read works, which a loaded machine
      // changes; once per overrun however many ticks it skips is job-overruns.test.ts's, exactly.
      const said = log.lines().filter((l) => String(l.msg).includes('longer than its schedule') && l.job === 'runs');
      expect(said.length).toBeGreaterThanOrEqual(1);
      expect(said.length).toBeLessThanOrEqual(skipped);
      expect(said[0]!.msg).toMatch(
        /^the runs read has taken \d+(\.\d+)?s, longer than its schedule: it runs to its end/,
      );
    } finally {
      // Time moves on while it stops: a runs read may be under way, waiting on the rate limit's
      // clock, and the stop's own deadline is on that clock too.
      let stopped = false;
      const stopping = wd.stop(1_000).finally(() => (stopped = true));
      while (!stopped) {
        await new Promise((resolve) => setTimeout(resolve, 2));
        h.clock.advance(250);
      }
      await stopping;
    }
  }, 120_000);
});
