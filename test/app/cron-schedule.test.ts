/** The scheduler on node-cron and vitest's fake timers: the wall clock stepped under it. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Scheduler } from '../../src/app/scheduler.js';
import { captureLogger } from '../notify/channels/fixtures.js';

afterEach(() => vi.useRealTimers());

const HOUR = 3_600_000;

describe('the scheduler on node-cron', () => {
  it('ticks on after the wall clock was stepped back an hour (NTP, a VM restored), and says so once', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 1, 12, 0, 0) });
    const ticks: number[] = [];
    const { logger, lines } = captureLogger();
    const scheduler = new Scheduler({
      jobs: [
        { name: 'runs', cron: '*/10 * * * * *' },
        { name: 'urls', cron: '*/10 * * * * *' },
      ],
      jitterMs: 0,
      run: (_job, slot) => Promise.resolve(ticks.push(slot)),
      logger,
    });
    scheduler.start();
    try {
      await vi.advanceTimersByTimeAsync(10_000);
      expect(ticks).toHaveLength(2);
      vi.setSystemTime(Date.now() - HOUR);
      await vi.advanceTimersByTimeAsync(60_000);
      // Each job ticks every 10 s again once the step is seen (within 5 s), not an hour later.
      expect(ticks.length).toBeGreaterThanOrEqual(2 + 2 * 5);
      const said = lines
        .map((line) => (JSON.parse(line) as { msg: string }).msg)
        .filter((m) => m.includes('went back'));
      // "Set for": the time the clock would say without the step (the fake timers' performance.now is rough).
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^the clock went back: the jobs are scheduled again from now \(it was set for 2026-11-01T12:00:1[\d.]+Z, now 2026-11-01T11:00:15Z\)$/,
      );
    } finally {
      await scheduler.stop();
    }
  });
});
