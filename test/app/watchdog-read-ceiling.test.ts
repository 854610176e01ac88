/**
 * A read is bounded by its ceiling (`jobs.read_ceiling`), never by its schedule: a read that hangs
 * past the ceiling is incomplete (a failed read that resolves nothing and counts toward "cannot
 * read") and the other jobs go on; a read that only takes longer than its schedule finishes.
 */
import { describe, expect, it } from 'vitest';
import { advancing } from '../faults/fault-fixture.js';
import { engineHarness, eventsOf, openWatchdog } from './fixtures.js';

const h = engineHarness({ apps: 12, seed: 6 });

describe('read ceiling', () => {
  it.each([
    ['jobs.read_ceiling', 'jobs: { read_ceiling: 10s, maintenance: "off" }'],
    ['the deprecated jobs.deadline, taken as the ceiling', 'jobs: { deadline: 10s, maintenance: "off" }'],
  ])('ends a hanging read at %s, as a failed read, and the next jobs go on', async (_what, jobs) => {
    const wd = h.watchdog(jobs);
    await wd.runOnce(['urls']);
    const before = eventsOf(wd, 'certificates/').length + eventsOf(wd, 'url_checks/').length;
    h.sim.control.setFault('urls.list', { hang: true });
    // The request itself would wait out api.timeout (5s, real time); the ceiling is clock time.
    const report = await advancing(h.clock, wd.runOnce(['urls', 'servers']), 2_000, 10);
    const [urls, servers] = report.jobs;
    expect(urls).toMatchObject({ job: 'urls', outcome: 'failed' });
    expect(urls!.reason).toBe('the read of urls reached its ceiling of 10s (jobs.read_ceiling) and is incomplete');
    expect(servers).toMatchObject({ job: 'servers', outcome: 'ok' });
    expect(eventsOf(wd, 'certificates/').length + eventsOf(wd, 'url_checks/').length).toBe(before);
    const health = wd.store.db
      .prepare(`SELECT consecutive_failures AS n, last_error AS e FROM source_health WHERE job = 'urls'`)
      .get() as { n: number; e: string };
    expect(health.n).toBe(1);
    expect(health.e).toMatch(/ceiling/);
  });

  it.each([
    ['by default (once "auto": the 20s between two runs of the schedule)', ''],
    ['with the deprecated jobs.deadline: auto', ', deadline: auto'],
  ])('lets a read that takes longer than its schedule finish, %s, as check does', async (_what, extra) => {
    const config = h.config(`jobs: { urls: "*/20 * * * * *", maintenance: "off"${extra} }`);
    // One request every 20s of clock time: whoami, the URL pages and the apps take 40s, twice the schedule.
    const wd = openWatchdog({ ...config, api: { ...config.api, requests_per_second: 0.05 } }, h.clock);
    try {
      const started = h.clock.now();
      const report = await advancing(h.clock, wd.runOnce(['urls']), 1_000, 5);
      expect(report.jobs[0]).toMatchObject({ job: 'urls', outcome: 'ok' });
      expect(h.clock.now() - started).toBeGreaterThanOrEqual(40_000);
      expect(eventsOf(wd, 'url_checks/').length + eventsOf(wd, 'certificates/').length).toBeGreaterThan(0);
    } finally {
      await wd.stop(1_000);
    }
  });
});
