/** The request budget: its plan as a table, and a 429 lowering it on a fake clock until it clears. */
import { describe, expect, it } from 'vitest';
import {
  BUDGET_HEADROOM,
  describeBudget,
  MAX_STRETCH,
  planBudget,
  RequestBudget,
  type BudgetSettings,
  type Estate,
} from '../../src/app/request-budget.js';
import type { SnapshotJob } from '../../src/collectors/snapshot.js';
import { ManualClock } from '../helpers/manual-clock.js';

const MINUTE = 60_000;
/** The daemon's default schedules. */
const DEFAULT_INTERVALS = new Map<SnapshotJob, number>([
  ['servers', MINUTE],
  ['installers', 5 * MINUTE],
  ['runs', MINUTE],
  ['attention', 5 * MINUTE],
  ['urls', 15 * MINUTE],
  ['backups', 60 * MINUTE],
  ['maintenance', 30 * MINUTE],
]);
const SETTINGS: BudgetSettings = { pageSize: 500, intervals: DEFAULT_INTERVALS, runStateLists: 3, readsPerApp: 1 };

/** The simulator's estate at a size (about 2 URLs, 20 runs and 30 backups an app). */
function estate(apps: number, namespaces = 1): Estate {
  return {
    apps,
    runs: 20 * apps,
    urls: 2 * apps,
    backups: 30 * apps,
    servers: apps / 50,
    installers: apps / 20,
    namespaces,
  };
}

const stretchOf = (plan: ReturnType<typeof planBudget>, job: string) => plan.jobs.find((j) => j.job === job)?.stretch;

describe('planBudget', () => {
  it.each([
    // apps, rps, maintenance's stretch, backups' stretch, fits
    [1_000, 10, 1, 1, true],
    [10_000, 10, 2, 1, true],
    [10_000, 5, 3, 1, true],
    [10_000, 2, 9, 1, true],
    [10_000, 0.5, MAX_STRETCH, MAX_STRETCH, false],
    [100_000, 10, 26, 1, true],
    [10_000, Infinity, 1, 1, true],
  ])(
    '%i apps at %s requests/s: maintenance one tick in %i, backups in %i (fits: %s)',
    (apps, rps, maint, backups, fits) => {
      const plan = planBudget(estate(apps), SETTINGS, rps);
      expect(stretchOf(plan, 'maintenance')).toBe(maint);
      expect(stretchOf(plan, 'backups')).toBe(backups);
      expect(stretchOf(plan, 'runs')).toBe(1);
      expect(plan.fits).toBe(fits);
      if (fits && Number.isFinite(rps)) expect(plan.ratio).toBeLessThanOrEqual(BUDGET_HEADROOM);
    },
  );

  it('plans the defaults at 10,000 apps under 20,000 requests an hour, the runs job under 2,000', () => {
    const plan = planBudget(estate(10_000), SETTINGS, 10);
    // Asked for: maintenance alone is 20,000 (one apps.get per app every 30 minutes); stretched to one tick in 2.
    expect(plan.demandPerHour).toBeGreaterThan(20_000);
    expect(plan.plannedPerHour).toBeLessThanOrEqual(20_000);
    expect(plan.jobs.find((j) => j.job === 'runs')!.perHour).toBeLessThanOrEqual(2_000);
    // Maintenance is the costliest: one apps.get per app every 30 minutes.
    const costliest = [...plan.jobs].sort((a, b) => b.perHour - a.perHour)[0]!;
    expect(costliest.job).toBe('maintenance');
  });

  it('says what it stretched and what was asked for', () => {
    const text = describeBudget(planBudget(estate(10_000), SETTINGS, 2));
    expect(text).toMatch(/^requests an hour: \d+ of 2\/s \(3600 an hour with headroom\)/);
    expect(text).toContain('to fit, maintenance runs one tick in 9');
    expect(text).toMatch(/asked for \d+/);
  });
});

describe('RequestBudget', () => {
  it('lowers the budget on a 429 until it clears, on a fake clock, and skips the ticks of a stretched job', () => {
    const clock = new ManualClock();
    const plans: number[] = [];
    const budget = new RequestBudget(
      SETTINGS,
      10,
      () => clock.now(),
      (p) => plans.push(p.requestsPerSecond),
    );
    // Before the estate is known every tick runs.
    expect(budget.admits('maintenance', 0)).toBe(true);
    budget.learn(estate(10_000));
    expect(stretchOf(budget.plan!, 'maintenance')).toBe(2);

    budget.throttled();
    // Several 429s at once are one step.
    budget.throttled();
    expect(budget.plan!.requestsPerSecond).toBe(5);
    expect(stretchOf(budget.plan!, 'maintenance')).toBe(3);
    const slot = (n: number) => n * 30 * MINUTE;
    expect([0, 1, 2, 3, 4].map((n) => budget.admits('maintenance', slot(n)))).toEqual([
      true,
      false,
      false,
      true,
      false,
    ]);
    expect(budget.admits('runs', slot(1))).toBe(true);
    expect(budget.intervalMs('maintenance', 30 * MINUTE)).toBe(90 * MINUTE);

    clock.advance(2_000);
    budget.throttled();
    expect(budget.plan!.requestsPerSecond).toBe(2.5);
    // A quiet minute: a step back up; another: back to the configured rate.
    clock.advance(MINUTE);
    expect(budget.plan!.requestsPerSecond).toBe(5);
    clock.advance(MINUTE);
    expect(budget.plan!.requestsPerSecond).toBe(10);
    expect(stretchOf(budget.plan!, 'maintenance')).toBe(2);
    expect(plans).toEqual([10, 5, 2.5, 5, 10]);
  });
});
