/**
 * What the maintenance job costs. Only `apps.get` carries an app's maintenance flag (and only
 * `restore_points.list` its restore points), so each cycle reads every app one by one: 10,000 apps at the default 10 requests/s take about 17 minutes, under
 * the same rate limit every other job shares. Nothing cheaper is correct: the list's `updated_at`
 * is not promised to change when maintenance is switched (the simulator's does not), so "read only
 * the apps that changed" could miss one. The daemon therefore works the cost out at start and says
 * so when the job would take a large share of the request budget.
 */
import { detectorsFor, extraReadsFor, type DetectorOptions } from '../detectors/registry.js';

/** One maintenance cycle's requests and time, against the gap between its runs ({@link maintenanceCost}). */
export type MaintenanceCost = ReturnType<typeof maintenanceCost>;

/** Above this share of the request budget, the job is worth a warning. */
export const MAINTENANCE_SHARE_WARNING = 0.5;

/**
 * Requests per app of a maintenance cycle: `apps.get`, and one more for each read an enabled check
 * asks its collector for beyond it (`reads` of the check: restore_points' `restore_points.list`).
 */
export function readsPerApp(options: DetectorOptions): number {
  return 1 + extraReadsFor(options).size;
}

/**
 * The cost of one maintenance cycle over `apps` apps; `readsPerApp`: `apps.get`, and
 * `restore_points.list` when an enabled check asks for it ({@link readsPerApp}; default 1).
 */
export function maintenanceCost(
  apps: number,
  options: { pageSize: number; requestsPerSecond: number; intervalMs: number; readsPerApp?: number },
) {
  const requests = maintenanceRequests(apps, options.pageSize, options.readsPerApp ?? 1);
  const readMs = Math.round((requests / options.requestsPerSecond) * 1000);
  return {
    apps,
    /** `apps.list` pages plus one `apps.get` per app (and one `restore_points.list`, with that check on). */
    requests,
    /** How long those take at the rate limit alone (ms). */
    readMs,
    /** The longest gap between two runs of `jobs.maintenance` (ms). */
    intervalMs: options.intervalMs,
    /** `readMs / intervalMs`: the share of the whole request budget the job takes. */
    share: options.intervalMs > 0 ? readMs / options.intervalMs : Infinity,
  };
}

/** The requests of one maintenance cycle over `apps` apps: the `apps.list` pages, then `readsPerApp` per app. */
export function maintenanceRequests(apps: number, pageSize: number, readsPerApp: number): number {
  return Math.max(1, Math.ceil(apps / pageSize)) + apps * readsPerApp;
}

/** The warning to log for a cost, or null when it is acceptable. */
export function maintenanceCostWarning(cost: MaintenanceCost): string | null {
  if (cost.share <= MAINTENANCE_SHARE_WARNING) return null;
  const minutes = (ms: number) => `${Math.round(ms / 6_000) / 10} min`;
  const what =
    cost.share > 1
      ? `longer than the ${minutes(cost.intervalMs)} between its runs, so runs will be skipped`
      : `${Math.round(cost.share * 100)}% of the ${minutes(cost.intervalMs)} between its runs`;
  return (
    `the maintenance job reads every app one by one: ${cost.apps} apps are ${cost.requests} requests, ` +
    `about ${minutes(cost.readMs)} at api.requests_per_second, ${what}, and the other jobs wait behind it ` +
    `for the same rate limit. Run jobs.maintenance less often, raise api.requests_per_second if the service allows, ` +
    `or switch off the checks it runs for (${detectorsFor('maintenance')
      .map((c) => `checks.${c.name}`)
      .join(', ')}: enabled: false)`
  );
}
