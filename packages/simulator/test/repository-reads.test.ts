/**
 * When the simulated platform last read an app's repositories (`repositories[].checked_at`), as the
 * repository_checks check reads it: read again every two hours while its reads run, stopped and
 * resumed by `checks.repository_checks` (in-process and over HTTP).
 */
import { describe, expect, it } from 'vitest';
import { appSchema } from '../../../src/api/schemas.js';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import { REPOSITORY_READ_EVERY_MS, type AppRec } from '../src/sim-state.js';
import { apiGet, simControl, useSimulator } from '../../../test/helpers/simulator.js';

const HOUR = 3_600_000;
const clock = new ManualClock('2026-11-01T12:00:00Z');
const sim = await useSimulator({ apps: 30, seed: 6, clock });
/** Apps with a repository, each used by one test only. */
const pool = [...sim.control.state.apps.values()].filter((a) => a.repositories.length > 0);
const take = (): AppRec => pool.shift()!;
const mainRead = async (id: number): Promise<number | null> => {
  const app = appSchema.parse((await apiGet(sim, `/apps/${id}`)).body.data);
  const at = app.repositories.find((r) => r.main)?.checked_at ?? null;
  return at === null ? null : Date.parse(at);
};

describe('repository reads', () => {
  it('reads a repository again every period while its reads run, however long the session', async () => {
    const app = take();
    sim.control.advance(3 * 24 * HOUR);
    const at = (await mainRead(app.id))!;
    expect(sim.control.now() - at).toBeGreaterThanOrEqual(0);
    expect(sim.control.now() - at).toBeLessThan(REPOSITORY_READ_EVERY_MS);
  });

  it.each<[string, number | null, (now: number) => number | null]>([
    ['50 hours ago: checked_at stays there', 50, (now) => now - 50 * HOUR],
    ['never (hoursAgo null): checked_at null', null, () => null],
  ])('stop, last read %s', async (_name, hoursAgo, expected) => {
    const app = take();
    const stoppedAt = sim.control.now();
    sim.control.checks.repository_checks.stop(app.id, { hoursAgo });
    sim.control.advance(5 * HOUR);
    expect(await mainRead(app.id)).toBe(expected(stoppedAt));
  });

  it('resume: read now, and again every period from then on', async () => {
    const app = take();
    sim.control.checks.repository_checks.stop(app.id, { hoursAgo: 80 });
    const resumed = sim.control.now();
    expect(sim.control.checks.repository_checks.resume(app.id).repositories.find((r) => r.main)?.checked_at).toBe(
      new Date(resumed).toISOString(),
    );
    sim.control.advance(REPOSITORY_READ_EVERY_MS + HOUR);
    expect(await mainRead(app.id)).toBe(resumed + REPOSITORY_READ_EVERY_MS);
  });

  it('stops a named repository over HTTP, and refuses one the app does not have', async () => {
    const app = take();
    const name = app.repositories[0]!.repository;
    const answer = await simControl(sim, 'checks.repository_checks.stop', [app.id, { repository: name, hoursAgo: 1 }]);
    expect(answer.status).toBe(200);
    expect(answer.body.data.repositories.find((r: { repository: string }) => r.repository === name).checked_at).toBe(
      new Date(sim.control.now() - HOUR).toISOString(),
    );
    const refused = await simControl(sim, 'checks.repository_checks.resume', [app.id, { repository: 'nope' }]);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/has no repository nope/);
  });
});
