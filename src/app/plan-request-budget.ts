import { ApiError } from '../api/errors.js';
import { warnMaintenanceCost } from './maintenance-cost.js';
import { describeBudget, type Estate } from './request-budget.js';
import type { Runtime } from './runtime.js';

/**
 * Counts the estate (the `total` of one `limit=1` page of each list, per namespace read), fits the
 * request budget to it (`request-budget.ts`: said at start, on `/readyz`, the console's sources
 * page and `deploy_watchdog_request_budget_ratio`), and warns when the maintenance job, which reads
 * each app, would take more than half the request budget. Never fails the start: an unreadable
 * API leaves it unsaid (and every tick runs); a list the token may not read counts as empty.
 */
export async function planRequestBudget(rt: Runtime, signal: AbortSignal): Promise<void> {
  const log = rt.deps.logger;
  try {
    const scope = await rt.deps.namespaces();
    const namespaces = scope.namespaces ?? [undefined];
    const count = async (list: (query: { limit: number; namespace?: string }) => Promise<{ total: number }>) => {
      let total = 0;
      for (const namespace of namespaces) {
        try {
          total += (await list(namespace === undefined ? { limit: 1 } : { limit: 1, namespace })).total;
        } catch (err) {
          if (!(err instanceof ApiError) || signal.aborted || err.code === 'rate_limited') throw err;
        }
      }
      return total;
    };
    const { client } = rt;
    const opts = { signal };
    const estate: Estate = {
      apps: await count((q) => client.apps.list(q, opts)),
      runs: await count((q) => client.runs.list(q, opts)),
      urls: await count((q) => client.urls.list(q, opts)),
      backups: await count((q) => client.backups.list(q, opts)),
      servers: await count((q) => client.servers.list(q, opts)),
      installers: await count((q) => client.installers.list(q, opts)),
      namespaces: namespaces.length,
    };
    const plan = rt.budget.learn(estate);
    const stretched = plan.jobs.some((j) => j.stretch > 1) || !plan.fits;
    log[stretched ? 'warn' : 'info']({ estate, ratio: Math.round(plan.ratio * 100) / 100 }, describeBudget(plan));
    warnMaintenanceCost(rt, estate.apps);
  } catch (err) {
    log.debug({ err }, 'cannot count the estate for the request budget');
  }
}
