import { ApiError } from '../api/errors.js';
import { describeError } from '../api/describe-error.js';
import { maintenanceCost, maintenanceCostWarning } from './maintenance-cost.js';
import { describeBudget, ESTATE_LISTS, type BudgetPlan, type Estate } from './request-budget.js';
import type { Runtime } from './runtime.js';

/** A list of the API client as the estate is counted: the `total` of one small page. */
interface CountedList {
  list(query: { limit: number; namespace?: string }, opts: { signal: AbortSignal }): Promise<{ total: number }>;
}

/**
 * Counts the estate (the `total` of one `limit=1` page of each list, per namespace read), fits the
 * request budget to it (`request-budget.ts`: said at start, on `/readyz`, the console's sources
 * page and `deploy_watchdog_request_budget_ratio`), and warns when the maintenance job, which reads
 * each app, would take more than half the request budget. Runs at start and at each tick of the
 * estate's schedule when the budget is due a count (`RequestBudget.countDue`); a count again is
 * said only when it changes what is stretched. Never fails the start: an unreadable API leaves the
 * budget unplanned (every tick runs), said once, until a later count; a list the token may not
 * read counts as empty.
 */
export async function planRequestBudget(rt: Runtime, signal: AbortSignal): Promise<void> {
  const log = rt.deps.logger;
  if (!rt.budget.countDue) return;
  try {
    const namespaces = (await rt.deps.namespaces()).namespaces ?? [undefined];
    const lists: Record<(typeof ESTATE_LISTS)[number], CountedList> = rt.client;
    const estate = {} as Estate;
    for (const name of ESTATE_LISTS) {
      estate[name] = 0;
      for (const namespace of namespaces) {
        try {
          const query = namespace === undefined ? { limit: 1 } : { limit: 1, namespace };
          estate[name] += (await lists[name].list(query, { signal })).total;
        } catch (err) {
          if (!(err instanceof ApiError) || signal.aborted || err.code === 'rate_limited') throw err;
        }
      }
    }
    estate.namespaces = namespaces.length;
    const before = rt.budget.plan;
    const plan = rt.budget.learn(estate);
    const ratio = Math.round(plan.ratio * 100) / 100;
    if (before && stretchesOf(before) === stretchesOf(plan)) {
      log.debug({ estate, ratio }, 'estate counted again; the request budget stretches the same');
      return;
    }
    const stretched = plan.jobs.some((j) => j.stretch > 1) || !plan.fits;
    log[stretched ? 'warn' : 'info']({ estate, ratio }, describeBudget(plan));
    warnMaintenanceCost(rt, estate.apps);
  } catch (err) {
    if (signal.aborted) return;
    const first = rt.budget.failedCounts++ === 0;
    const meanwhile = rt.budget.plan ? 'the last count stands' : 'no job is stretched to fit it';
    log[first ? 'warn' : 'debug'](
      { error: describeError(err) },
      `cannot count the estate for the request budget: ${meanwhile} until a count succeeds (tried again every 5 minutes)`,
    );
  }
}

/** What a plan stretches, and whether it fits: a count again that changes this is said. */
function stretchesOf(plan: BudgetPlan): string {
  return `${plan.jobs.map((j) => `${j.job}:${j.stretch}`).join(',')} fits:${plan.fits}`;
}

/**
 * Warns when the maintenance job, which reads every app of `apps`, would take more than half the
 * request budget: its cost from the budget's own settings (page size, reads per app, schedule).
 */
function warnMaintenanceCost(rt: Runtime, apps: number): void {
  const { settings } = rt.budget;
  const intervalMs = settings.intervals.get('maintenance');
  if (intervalMs === undefined) return;
  const cost = maintenanceCost(apps, { ...settings, requestsPerSecond: rt.config.api.requests_per_second, intervalMs });
  const warning = maintenanceCostWarning(cost);
  const log = rt.deps.logger;
  if (warning) log.warn({ apps, requests: cost.requests, readMs: cost.readMs, intervalMs }, warning);
  else log.debug({ apps, readMs: cost.readMs, intervalMs }, 'maintenance job cost');
}
