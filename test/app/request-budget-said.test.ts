/**
 * The request budget is said everywhere the issue asks: at start (the log), on `/readyz`, on the
 * console's sources page and in `deploy_watchdog_request_budget_ratio` and
 * `deploy_watchdog_job_stretch`. A real daemon on a ManualClock, its listener on a free loopback
 * port, against the simulator; the maintenance job every second at the default 10 requests/s so
 * the budget must stretch it (and never the runs job).
 */
import { describe, expect, it } from 'vitest';
import type { ScheduleFn } from '../../src/app/scheduler.js';
import type { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { freePort } from '../console/console-fixture.js';
import { captureLogger, engineConfig, manualSim, openWatchdog, tempDir } from './fixtures.js';

/** The value of a gauge for these labels (undefined when never set). */
async function gauge(metrics: Metrics, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const metric = await metrics.registry.getSingleMetric(name)!.get();
  return metric.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

/** Advances `clock` in steps (the client's rate limit waits on it) until `done`, within 10 minutes of clock time. */
async function until(clock: ManualClock, done: () => boolean, what: string): Promise<void> {
  for (let step = 0; !done(); step++) {
    expect(step, `${what} within 10 minutes of clock time`).toBeLessThan(6_000);
    await new Promise((resolve) => setTimeout(resolve, 2));
    clock.advance(100);
  }
}

/** Stops the daemon (its stop waits on the clock), the simulator, and removes the state. */
async function stopAll(
  wd: ReturnType<typeof openWatchdog>,
  clock: ManualClock,
  sim: { close(): Promise<void> },
  tmp: { cleanup(): void },
): Promise<void> {
  let stopped = false;
  const stopping = wd.stop(1_000).finally(() => (stopped = true));
  while (!stopped) {
    await new Promise((resolve) => setTimeout(resolve, 2));
    clock.advance(250);
  }
  await stopping;
  await sim.close();
  tmp.cleanup();
}

describe('the request budget, said', () => {
  it('at start, on /readyz, on the sources page and in the metrics, with maintenance stretched', async () => {
    const { sim, clock } = await manualSim({ apps: 60, seed: 4 });
    const tmp = tempDir();
    const port = await freePort();
    const base = engineConfig(
      sim,
      tmp.dir,
      ['jobs:', '  maintenance: "* * * * * *"', '  jitter: 0s'].join('\n'),
      undefined,
      undefined,
      `{ listen: "127.0.0.1:${port}" }`,
    );
    // The daemon's default rate: 60 apps read every second is far past half of 10 requests/s.
    const config = { ...base, api: { ...base.api, requests_per_second: 10 } };
    const log = captureLogger('info');
    const metrics = new Metrics({ processMetrics: false });
    // No ticks: what is said comes from the count at start, not from any cycle.
    const schedule: ScheduleFn = () => ({ stop: async () => undefined });
    const wd = openWatchdog(config, clock, { logger: log.logger, metrics, schedule });
    const saidAtStart = () => log.lines().find((l) => String(l.msg).startsWith('requests an hour:'));
    try {
      await wd.start();
      // The estate is counted after start, through the client's rate limit, which waits on this clock.
      for (let step = 0; !saidAtStart(); step++) {
        expect(step, 'the budget was not said within 10 minutes of clock time').toBeLessThan(6_000);
        await new Promise((resolve) => setTimeout(resolve, 2));
        clock.advance(100);
      }

      const said = saidAtStart();
      expect(said?.msg).toMatch(/maintenance runs one tick in \d+/);
      expect(said?.msg).not.toMatch(/runs runs one tick/);

      // /readyz answers the last judgement, made again each second while it is asked: it says the
      // budget within a second or two of being asked.
      const budgetOnReadyz = async () => {
        const ready = (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.json())) as {
          checks: { check: string; ok: boolean; detail: string }[];
        };
        return ready.checks.find((c) => c.check === 'request_budget');
      };
      let budget = await budgetOnReadyz();
      for (let tries = 0; budget === undefined && tries < 300; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        budget = await budgetOnReadyz();
      }
      expect(budget).toMatchObject({ ok: true, detail: said?.msg });

      const page = await fetch(`http://127.0.0.1:${port}/sources`).then((r) => r.text());
      expect(page).toContain('Request budget:');
      expect(page).toMatch(/maintenance runs one tick in \d+/);

      const ratio = await gauge(metrics, 'deploy_watchdog_request_budget_ratio');
      expect(ratio).toBeGreaterThan(0);
      expect(ratio).toBeLessThanOrEqual(0.5);
      expect(await gauge(metrics, 'deploy_watchdog_job_stretch', { source: 'maintenance' })).toBeGreaterThan(1);
      expect(await gauge(metrics, 'deploy_watchdog_job_stretch', { source: 'runs' })).toBe(1);
      // A lone daemon leads from its start.
      expect(await gauge(metrics, 'deploy_watchdog_leader')).toBe(1);
    } finally {
      await stopAll(wd, clock, sim, tmp);
    }
  }, 60_000);

  it('is counted again after a count that failed, and an hour later, said when what it stretches changes', async () => {
    const { sim, clock } = await manualSim({ apps: 60, seed: 4 });
    const tmp = tempDir();
    const base = engineConfig(sim, tmp.dir, ['jobs:', '  maintenance: "* * * * *"', '  jitter: 0s'].join('\n'));
    const config = { ...base, api: { ...base.api, requests_per_second: 10 } };
    const log = captureLogger('info');
    const metrics = new Metrics({ processMetrics: false });
    // Ticks by hand, only the estate's: no cycle runs.
    const ticks = new Map<string, () => Promise<void>>();
    const schedule: ScheduleFn = (_expression, tick, options) => {
      ticks.set(options.name.replace('deploy-watchdog:', ''), tick);
      return { stop: async () => undefined };
    };
    const wd = openWatchdog(config, clock, { logger: log.logger, metrics, schedule });
    const said = (text: string) => log.lines().filter((l) => String(l.msg).includes(text));
    const budgets = () => said('requests an hour:');
    try {
      // The service is down when the daemon starts: the count fails, and says so once.
      sim.control.setFault('apps.list', { html502: true });
      await wd.start();
      await until(clock, () => said('cannot count the estate').length > 0, 'the failed count was said');
      expect(said('cannot count the estate')[0]).toMatchObject({ level: 40 });
      expect(budgets()).toHaveLength(0);

      // It is back by the next tick of the estate: the budget is planned and said; 60 apps read
      // every minute fit under half of 10 requests/s.
      sim.control.clearFaults();
      clock.advance(5 * 60_000);
      const counting = ticks.get('estate')!();
      await until(clock, () => budgets().length > 0, 'the budget was said after the failed count');
      await counting;
      expect(budgets()[0]!.msg).not.toMatch(/one tick in/);
      expect(await gauge(metrics, 'deploy_watchdog_job_stretch', { source: 'maintenance' })).toBe(1);

      // The estate grows tenfold. Within the hour nothing is counted again; an hour later it is,
      // and the budget now stretches maintenance, and says so.
      const state = sim.control.state;
      for (const app of [...state.apps.values()])
        for (let copy = 0; copy < 9; copy++) {
          const id = state.nextId('app');
          state.apps.set(id, { ...app, id });
        }
      await ticks.get('estate')!();
      expect(budgets()).toHaveLength(1);
      clock.advance(60 * 60_000);
      const again = ticks.get('estate')!();
      await until(clock, () => budgets().length > 1, 'the budget was said again after the estate grew');
      await again;
      expect(budgets()[1]!.msg).toMatch(/maintenance runs one tick in \d+/);
      const apps = (line: Record<string, unknown>) => (line.estate as { apps: number }).apps;
      expect(budgets()[1]).toMatchObject({ level: 40 });
      expect(apps(budgets()[1]!)).toBe(10 * apps(budgets()[0]!));
      expect(await gauge(metrics, 'deploy_watchdog_job_stretch', { source: 'maintenance' })).toBeGreaterThan(1);
    } finally {
      await stopAll(wd, clock, sim, tmp);
    }
  }, 60_000);
});
