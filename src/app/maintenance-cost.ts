/**
 * What the maintenance job costs. Only `apps.get` carries an app's maintenance flag, so each cycle
 * reads every app one by one: 10,000 apps at the default 10 requests/s take about 17 minutes, under
 * the same rate limit every other job shares. Nothing cheaper is correct: the list's `updated_at`
 * is not promised to change when maintenance is switched (the simulator's does not), so "read only
 * the apps that changed" could miss one. The daemon therefore works the cost out at start and says
 * so when the job would take a large share of the request budget.
 */

/** One maintenance cycle's requests and time, against the gap between its runs. */
export interface MaintenanceCost {
  apps: number;
  /** `apps.list` pages plus one `apps.get` per app. */
  requests: number;
  /** How long those take at the rate limit alone (ms). */
  readMs: number;
  /** The longest gap between two runs of `jobs.maintenance` (ms). */
  intervalMs: number;
  /** `readMs / intervalMs`: the share of the whole request budget the job takes. */
  share: number;
}

/** Above this share of the request budget, the job is worth a warning. */
export const MAINTENANCE_SHARE_WARNING = 0.5;

/** The cost of one maintenance cycle over `apps` apps. */
export function maintenanceCost(
  apps: number,
  options: { pageSize: number; requestsPerSecond: number; intervalMs: number },
): MaintenanceCost {
  const requests = Math.max(1, Math.ceil(apps / options.pageSize)) + apps;
  const readMs = Math.round((requests / options.requestsPerSecond) * 1000);
  return {
    apps,
    requests,
    readMs,
    intervalMs: options.intervalMs,
    share: options.intervalMs > 0 ? readMs / options.intervalMs : Infinity,
  };
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
    `the maintenance job reads every app with apps.get: ${cost.apps} apps are ${cost.requests} requests, ` +
    `about ${minutes(cost.readMs)} at api.requests_per_second, ${what}, and the other jobs wait behind it ` +
    `for the same rate limit. Run jobs.maintenance less often, raise api.requests_per_second if the service allows, ` +
    `or set checks.maintenance.enabled: false`
  );
}
