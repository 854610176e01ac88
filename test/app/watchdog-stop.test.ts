/** Stopping with a cycle in progress, and the scheduler's schedules, on the real clock. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/app/scheduler.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/index.js';
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

describe('Scheduler', () => {
  it.each([
    ['*/1 * * * *', 60_000],
    ['*/15 * * * * *', 15_000],
    ['0 * * * *', 3_600_000],
  ])('knows the longest gap of %s', (cron, gap) => {
    const scheduler = new Scheduler({ jobs: [{ name: 'x', cron }], jitterMs: 0, run: async () => undefined, logger: captureLogger('silent').logger });
    expect(scheduler.intervalMs('x')).toBe(gap);
  });

  it('fires on a seconds schedule and never starts a job again while its cycle runs', async () => {
    let started = 0;
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    const scheduler = new Scheduler({
      jobs: [{ name: 'runs', cron: '* * * * * *' }],
      jitterMs: 0,
      run: async () => {
        started++;
        await blocked;
      },
      logger: captureLogger('silent').logger,
    });
    scheduler.start();
    try {
      expect(scheduler.running).toBe(true);
      const end = Date.now() + 5_000;
      while (started === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(started).toBe(1);
      // Two more ticks pass while the first cycle is still running.
      await new Promise((r) => setTimeout(r, 2_100));
      expect(started).toBe(1);
    } finally {
      release();
      await scheduler.stop();
    }
    expect(scheduler.running).toBe(false);
  });
});
