/** Stopping with a cycle in progress (real clock), and the scheduler's schedules (ticks given by hand). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler, type ScheduleFn } from '../../src/app/scheduler.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { startSimulator, type RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, engineConfig, tempDir } from './fixtures.js';

let sim: RunningSimulator;
let tmp: ReturnType<typeof tempDir>;

beforeEach(async () => {
  sim = await startSimulator({ apps: 6 });
  tmp = tempDir();
});
afterEach(async () => {
  await sim.close();
  tmp.cleanup();
});

describe('Watchdog.stop', () => {
  it('aborts a cycle still running at the deadline, writes nothing of it, and closes the database', async () => {
    const wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), logger: captureLogger('silent').logger });
    sim.control.setFault('runs.list', { hang: true });
    const cycle = wd.runOnce(['runs']);
    // Let the request reach the simulator before stopping.
    while (!sim.control.requests().some((r) => r.fn === 'runs.list')) await new Promise((r) => setTimeout(r, 10));
    const stopped = await wd.stop(100);
    expect(stopped.cyclesFinished).toBe(false);
    const report = await cycle;
    expect(report.jobs[0]).toMatchObject({ job: 'runs', outcome: 'aborted' });
    expect(() => wd.store.db.prepare('SELECT 1').get()).toThrow(/not open/);
  });

  it('waits for a cycle that finishes in time', async () => {
    const wd = Watchdog.open({ config: engineConfig(sim, tmp.dir), logger: captureLogger('silent').logger });
    const cycle = wd.runOnce(['urls']);
    const stopped = await wd.stop(10_000);
    expect(stopped.cyclesFinished).toBe(true);
    expect((await cycle).jobs[0]!.outcome).toBe('ok');
  });
});

describe('Watchdog stop signal', () => {
  it('gives each job cycle its own stop signal, so many requests in flight raise no MaxListenersExceededWarning', async () => {
    const big = await startSimulator({ apps: 40 });
    const dir = tempDir();
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    const config = engineConfig(big, dir.dir);
    // 16 apps.get in flight at once: more listeners than Node's default 10 on one signal.
    config.api.concurrency = 16;
    const wd = Watchdog.open({ config, logger: captureLogger('silent').logger });
    try {
      // Every job at once, as the daemon's first cycles and coinciding schedules run them.
      const reports = await Promise.all(wd.jobs.map((job) => wd.runOnce([job])));
      expect(reports.map((r) => r.jobs[0]!.outcome)).toEqual(wd.jobs.map(() => 'ok'));
      // process warnings are emitted on a later tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await wd.stop(1_000);
      await big.close();
      dir.cleanup();
    }
  });
});

describe('Scheduler', () => {
  it.each([
    ['*/1 * * * *', 60_000],
    ['*/15 * * * * *', 15_000],
    ['0 * * * *', 3_600_000],
  ])('knows the longest gap of %s', (cron, gap) => {
    const scheduler = new Scheduler({
      jobs: [{ name: 'x', cron }],
      jitterMs: 0,
      run: async () => undefined,
      logger: captureLogger('silent').logger,
    });
    expect(scheduler.intervalMs('x')).toBe(gap);
  });

  /** A tick source driven by hand: `tick(job)` is one time of the job's schedule coming. */
  function manualTicks() {
    const ticks = new Map<string, () => Promise<void>>();
    const stopped: string[] = [];
    const schedule: ScheduleFn = (expression, tick, options) => {
      const job = options.name.replace('deploy-watchdog:', '');
      ticks.set(job, tick);
      return { stop: async () => void stopped.push(`${job} ${expression}`) };
    };
    return { schedule, stopped, tick: (job: string) => ticks.get(job)!() };
  }

  it('runs a job on each tick, and never starts it again while its cycle runs', async () => {
    const clock = manualTicks();
    const started: string[] = [];
    const releases: (() => void)[] = [];
    const scheduler = new Scheduler({
      jobs: [
        { name: 'runs', cron: '* * * * * *' },
        { name: 'urls', cron: '*/15 * * * *' },
      ],
      jitterMs: 0,
      run: (job) => {
        started.push(job);
        return new Promise<void>((r) => releases.push(r));
      },
      logger: captureLogger('silent').logger,
      schedule: clock.schedule,
    });
    scheduler.start();

    const first = clock.tick('runs');
    // Two more ticks while the first cycle runs: skipped, not queued. Another job is not held up.
    await clock.tick('runs');
    await clock.tick('runs');
    const other = clock.tick('urls');
    expect(started).toEqual(['runs', 'urls']);

    releases.forEach((r) => r());
    await Promise.all([first, other]);
    const second = clock.tick('runs');
    expect(started).toEqual(['runs', 'urls', 'runs']);
    releases[2]!();
    await second;

    await scheduler.stop();
    expect(clock.stopped).toEqual(['runs * * * * * *', 'urls */15 * * * *']);
    // A tick that was already on its way when the scheduler stopped starts nothing.
    await clock.tick('runs');
    expect(started).toHaveLength(3);
  });

  it('logs a cycle that throws and runs the job again on the next tick', async () => {
    const clock = manualTicks();
    const log = captureLogger('error');
    let calls = 0;
    const scheduler = new Scheduler({
      jobs: [{ name: 'runs', cron: '*/1 * * * *' }],
      jitterMs: 0,
      run: async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
      logger: log.logger,
      schedule: clock.schedule,
    });
    scheduler.start();
    await clock.tick('runs');
    await clock.tick('runs');
    await scheduler.stop();
    expect(calls).toBe(2);
    expect(log.lines()).toMatchObject([{ msg: 'job cycle threw', job: 'runs' }]);
  });
});
