/**
 * The attention job against the simulator, where the service lists at most 20 items per section:
 * an item pushed out of the listed window is still a problem, so it must not resolve (no false
 * "resolved"); it resolves once the section lists every item again and it is not among them.
 */
import { describe, expect, it } from 'vitest';
import { getAlert, openAlerts } from '../../src/alerts/alert-store.js';
import type { Watchdog } from '../../src/app/watchdog.js';
import { engineHarness, eventsOf, MINUTE } from './fixtures.js';

const engine = engineHarness({ apps: 60 });

const RULE = 'attention/certificate_expired/';

/** One URL per app, in the order the simulator lists attention items (by app). */
function urlPerApp(): number[] {
  const byApp = new Map<number, number>();
  for (const url of [...engine.sim.control.state.urls.values()].sort((a, b) => a.appId - b.appId || a.id - b.id)) {
    if (!byApp.has(url.appId)) byApp.set(url.appId, url.id);
  }
  return [...byApp.values()];
}

const firingItems = (w: Watchdog) =>
  openAlerts(w.store)
    .filter((a) => a.fingerprint.startsWith(RULE) && !a.fingerprint.endsWith('/more'))
    .map((a) => a.fingerprint);

describe('a truncated attention section', () => {
  it('keeps alerts pushed out of the listed 20 open, and resolves them only once the section fits again', async () => {
    const { sim, clock } = engine;
    for (const id of sim.control.state.urls.keys()) sim.control.renewCertificate(id);
    const urls = urlPerApp();
    expect(urls.length).toBeGreaterThanOrEqual(40);
    const late = urls.slice(-25);
    const early = urls.slice(0, 5);
    for (const id of late) sim.control.expireCertificate(id, { inDays: -1 });

    const wd = engine.watchdog('checks:\n  attention: { min_severity: info }');
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const first = firingItems(wd);
    expect(first).toHaveLength(20);
    expect(getAlert(wd.store, `${RULE}more`)?.status).toBe('firing');

    // Five more expire on apps listed before them: five of the first twenty leave the window.
    for (const id of early) sim.control.expireCertificate(id, { inDays: -1 });
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    expect(eventsOf(wd, RULE).filter((e) => e.kind === 'resolved')).toEqual([]);
    const second = firingItems(wd);
    expect(second).toHaveLength(25);
    expect(second).toEqual(expect.arrayContaining(first));

    // Ten renewed (the five new ones and five of the listed ones): 20 in all, every one listed.
    const renewed = [...early, ...late.slice(0, 5)];
    for (const id of renewed) sim.control.renewCertificate(id);
    clock.advance(MINUTE);
    expect((await wd.runOnce(['attention'])).complete).toBe(true);
    const resolved = eventsOf(wd, RULE)
      .filter((e) => e.kind === 'resolved')
      .map((e) => e.fingerprint);
    expect(resolved.sort()).toEqual([...renewed.map((id) => `${RULE}url/id/${id}`), `${RULE}more`].sort());
    const still = firingItems(wd);
    expect(still).toHaveLength(20);
    // The ones that had left the window are listed again and were never resolved nor re-announced.
    for (const fp of still) expect(eventsOf(wd, fp).map((e) => e.kind)).toEqual(['firing']);
  });
});
