/**
 * undo_copies, end to end against the simulator: with `checks.undo_copies` on, the maintenance job
 * reads each app's newest restore points and raises one alert for a point whose database copy is
 * held past its kept_until (set through the simulator's control interface), resolved when the copy
 * is let go.
 */
import { describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { simControl } from '../helpers/simulator.js';
import { engineHarness, eventsOf, MINUTE, resolutionOf } from './fixtures.js';

const h = engineHarness();

/** Calls the simulator's control interface as an out-of-process test would; answers the record. */
async function control(method: string, args: unknown[]): Promise<{ id: number }> {
  const answer = await simControl(h.sim, method, args);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data ?? answer.body;
}

describe('a database copy held past its kept_until', () => {
  it('fires one warning while the copy is held, and resolves when it is let go', async () => {
    const wd = h.watchdog('checks: { undo_copies: { enabled: true } }');
    const app = [...h.sim.control.state.apps.values()].find((a) => a.state === 'running');
    const point = await control('checks.undo_copies.overdue', [app!.id]);
    const fp = `undo_copies/copy/${point.id}`;

    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([{ kind: 'firing', fingerprint: fp }]);
    expect(alertStoreOf(wd.store).get(fp)).toMatchObject({
      status: 'firing',
      severity: 'warning',
      labels: { check: 'undo_copies', app: app!.name },
    });

    h.clock.advance(MINUTE);
    await control('checks.undo_copies.letGo', [point.id]);
    await wd.runOnce(['maintenance']);
    expect(eventsOf(wd, fp)).toEqual([
      { kind: 'firing', fingerprint: fp },
      { kind: 'resolved', fingerprint: fp },
    ]);
    expect(resolutionOf(wd, fp)).toBe(`the copy of restore point #${point.id} was let go`);
  });
});
