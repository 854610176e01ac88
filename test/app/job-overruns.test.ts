/**
 * A read that overruns its schedule: the ticks that come while it runs are skipped and counted per
 * job, and the overrun is said once, at its first skipped tick a whole schedule gap into the read,
 * with how long the read has taken;
 * the daemon's first cycles (`runNow`) are overruns like any other.
 */
import { describe, expect, it } from 'vitest';
import { JobOverruns } from '../../src/app/job-overruns.js';
import { Scheduler, type ScheduleFn } from '../../src/app/scheduler.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Metrics } from '../../src/lib/metrics.js';
import { captureLogger } from './fixtures.js';

/** A tick source driven by hand. */
function manualTicks() {
  const ticks = new Map<string, () => Promise<void>>();
  const schedule: ScheduleFn = (_expression, tick, options) => {
    ticks.set(options.name.replace('deploy-watchdog:', ''), tick);
    return { stop: async () => undefined };
  };
  return { schedule, tick: (job: string) => ticks.get(job)!() };
}

async function overruns(metrics: Metrics, job: string): Promise<number> {
  const values = (await metrics.jobOverruns.get()).values;
  return values.find((v) => v.labels.source === job)?.value ?? 0;
}

describe('JobOverruns', () => {
  it.each([
    { name: 'a scheduled tick', first: 'tick' as const },
    { name: "the daemon's first cycle", first: 'runNow' as const },
  ])('counts every tick skipped while $name runs, and says it once', async ({ first }) => {
    const clock = new ManualClock();
    const log = captureLogger('debug');
    const metrics = new Metrics({ processMetrics: false });
    const ticks = manualTicks();
    const releases: (() => void)[] = [];
    const scheduler = new Scheduler({
      jobs: [
        { name: 'runs', cron: '*/2 * * * * *' },
        { name: 'urls', cron: '*/15 * * * *' },
      ],
      jitterMs: 0,
      run: () => new Promise<void>((r) => releases.push(r)),
      logger: log.logger,
      schedule: ticks.schedule,
      overruns: new JobOverruns({ clock, logger: log.logger, metrics }),
    });
    scheduler.start();
    const running = first === 'tick' ? ticks.tick('runs') : scheduler.runNow('runs');
    // A read's time is measured to the millisecond and said to the second.
    clock.advance(250);
    for (let i = 0; i < 5; i++) {
      clock.advance(2_000);
      await ticks.tick('runs');
    }
    // Another job's ticks are its own.
    const other = ticks.tick('urls');
    expect(await overruns(metrics, 'runs')).toBe(5);
    expect(await overruns(metrics, 'urls')).toBe(0);
    const said = log.lines().filter((l) => l.level === 40);
    expect(said).toEqual([
      expect.objectContaining({
        job: 'runs',
        runningForMs: 2_250,
        msg: 'the runs read has taken 2s, longer than its schedule: it runs to its end, and its ticks are skipped until then (deploy_watchdog_job_overruns_total)',
      }),
    ]);
    releases.forEach((r) => r());
    await Promise.all([running, other]);

    // The next read: a tick sooner than its schedule's gap (a read started between two slots) is
    // counted, not said; one a whole gap in is an overrun, said again, once.
    const next = ticks.tick('runs');
    await ticks.tick('runs');
    expect(log.lines().filter((l) => l.level === 40)).toHaveLength(1);
    clock.advance(2_000);
    await ticks.tick('runs');
    expect(log.lines().filter((l) => l.level === 40)).toHaveLength(2);
    expect(await overruns(metrics, 'runs')).toBe(7);
    releases.at(-1)!();
    await next;
    await scheduler.stop();
  });
});
