/** The maintenance job's cost: worked out from the app count, and said at start when it is high. */
import { afterEach, describe, expect, it } from 'vitest';
import { maintenanceCost, maintenanceCostWarning } from '../../src/app/maintenance-cost.js';
import { Watchdog } from '../../src/app/watchdog.js';
import { detectorsFor } from '../../src/detectors/registry.js';
import type { RunningSimulator } from '../../packages/simulator/src/index.js';
import { captureLogger, engineConfig, manualSim, tempDir } from './fixtures.js';

const MINUTE = 60_000;

describe('maintenanceCost', () => {
  it.each<[string, number, number, number, number, RegExp | null]>([
    [
      '10,000 apps at 10/s every 15 min',
      10_000,
      10,
      15 * MINUTE,
      10_020,
      /longer than the 15 min between its runs, so runs will be skipped/,
    ],
    [
      '10,000 apps at 10/s every 30 min',
      10_000,
      10,
      30 * MINUTE,
      10_020,
      /^the maintenance job reads every app one by one: 10000 apps are 10020 requests, about 16\.7 min .*, 56% of the 30 min between its runs/,
    ],
    ['10,000 apps at 10/s every 2 h', 10_000, 10, 120 * MINUTE, 10_020, null],
    ['500 apps at 10/s every 30 min', 500, 10, 30 * MINUTE, 501, null],
    ['10,000 apps at 10/s every 5 h', 10_000, 10, 300 * MINUTE, 10_020, null],
    ['2,000 apps at 1/s every 1 h', 2_000, 1, 60 * MINUTE, 2_004, /56% of the 60 min between its runs/],
  ])('%s', (_what, apps, rps, intervalMs, requests, warning) => {
    const cost = maintenanceCost(apps, { pageSize: 500, requestsPerSecond: rps, intervalMs });
    expect(cost.requests).toBe(requests);
    expect(cost.readMs).toBe(Math.round((requests / rps) * 1000));
    const said = maintenanceCostWarning(cost);
    if (warning === null) expect(said).toBeNull();
    else expect(said).toMatch(warning);
  });

  it('counts a second read per app with the restore_points check on', () => {
    const cost = maintenanceCost(10_000, {
      pageSize: 500,
      requestsPerSecond: 10,
      intervalMs: 60 * MINUTE,
      readsPerApp: 2,
    });
    expect(cost.requests).toBe(20_020);
    expect(maintenanceCostWarning(cost)).toMatch(/20020 requests, about 33\.4 min/);
  });

  it('names every check the job runs for as a way to stop it', () => {
    const said = maintenanceCostWarning(
      maintenanceCost(10_000, { pageSize: 500, requestsPerSecond: 10, intervalMs: MINUTE }),
    );
    for (const check of detectorsFor('maintenance')) expect(said).toContain(`checks.${check.name}`);
  });
});

describe('Watchdog.start', () => {
  let sim: RunningSimulator | undefined;
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(async () => {
    await sim?.close();
    tmp?.cleanup();
  });

  it.each([
    ['warns when the maintenance job takes most of the request budget', '"* * * * * *"', true],
    ['says nothing when it takes little', '"0 * * * *"', false],
  ])('%s', async (_what, schedule, warns) => {
    const started = await manualSim({ apps: 600 });
    sim = started.sim;
    const { clock } = started;
    const { control } = started.sim;
    tmp = tempDir();
    const log = captureLogger('warn');
    // 600 apps and 12 pages of 50 at 1000 requests/s: about 0.6 s, every second or every hour.
    const config = engineConfig(
      sim,
      tmp.dir,
      `jobs: { runs: "off", attention: "off", urls: "off", backups: "off", servers: "off", maintenance: ${schedule} }`,
    );
    const wd = Watchdog.open({ config, clock, logger: log.logger });
    try {
      await wd.start();
      // The first cycle has read an app, and the estate is counted (installers.list, its last list,
      // is read by nothing else here): the warning, if any, is said as that answer comes back.
      const seen = (fn: string) => control.requests().some((r) => r.fn === fn);
      for (let i = 0; i < 1_000 && !(seen('apps.get') && seen('installers.list')); i++)
        await new Promise((r) => setTimeout(r, 10));
      // A warning is waited for (up to 10 s: a loaded machine may take a while to say it); its
      // absence, after a moment more.
      for (let i = 0; i < 1_000 && warns && warningsIn(log).length === 0; i++)
        await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      await wd.stop(0);
    }
    const warnings = warningsIn(log);
    expect(warnings.length).toBe(warns ? 1 : 0);
    if (warns) {
      // The apps apps.list gives (the seed's deleted ones left out), with one list page per 50.
      const { apps, requests } = warnings[0] as { apps: number; requests: number };
      expect(apps).toBeGreaterThan(500);
      expect(requests).toBe(apps + Math.ceil(apps / 50));
    }
  });
});

/** The maintenance job's warning that it takes most of the request budget, as logged so far. */
function warningsIn(log: ReturnType<typeof captureLogger>) {
  return log
    .lines()
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the maintenance job reads every app'));
}
