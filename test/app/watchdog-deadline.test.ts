/**
 * Every job has a deadline (`jobs.deadline`): a read that hangs past it is incomplete — a failed
 * read that resolves nothing and counts toward "cannot read" — and the other jobs go on.
 */
import { describe, expect, it } from 'vitest';
import { advancing } from '../faults/fault-fixture.js';
import { engineHarness, eventsOf } from './fixtures.js';

const h = engineHarness({ apps: 12, seed: 6 });

describe('job deadline', () => {
  it.each([
    ['a duration', 'jobs: { deadline: 10s, maintenance: "off" }', '10s'],
    ['auto: the time between two runs of the schedule', 'jobs: { urls: "*/20 * * * * *", maintenance: "off" }', '20s'],
  ])('ends a hanging read at %s, as a failed read, and the next jobs go on', async (_what, jobs, shown) => {
    const wd = h.watchdog(jobs);
    await wd.runOnce(['urls']);
    const before = eventsOf(wd, 'certificates/').length + eventsOf(wd, 'url_checks/').length;
    h.sim.control.setFault('urls.list', { hang: true });
    // The request itself would wait out api.timeout (5s, real time); the deadline is clock time.
    const report = await advancing(h.clock, wd.runOnce(['urls', 'servers']), 2_000, 10);
    const [urls, servers] = report.jobs;
    expect(urls).toMatchObject({ job: 'urls', outcome: 'failed' });
    expect(urls!.reason).toBe(
      `the read of urls took longer than its deadline of ${shown} (jobs.deadline) and is incomplete`,
    );
    expect(servers).toMatchObject({ job: 'servers', outcome: 'ok' });
    expect(eventsOf(wd, 'certificates/').length + eventsOf(wd, 'url_checks/').length).toBe(before);
    const health = wd.store.db
      .prepare(`SELECT consecutive_failures AS n, last_error AS e FROM source_health WHERE job = 'urls'`)
      .get() as { n: number; e: string };
    expect(health.n).toBe(1);
    expect(health.e).toMatch(/deadline/);
  });
});
