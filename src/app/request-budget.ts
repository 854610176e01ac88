/**
 * The request budget: what each job costs an hour at the estate's size and its schedule, fitted
 * under `api.requests_per_second` with headroom. The reference states no rate limit (§8), so the
 * client's own limit is the budget, and every job shares it: a job that asks for more than its
 * share makes the others wait behind it, the runs job (the one that pages) included.
 *
 * When the jobs ask for more than the budget, the costliest job is stretched first: maintenance
 * (one `apps.get` per app), run every 2nd, 3rd… tick of its schedule, then the next costliest,
 * and never the runs job. A 429 (with or without `Retry-After`) lowers the budget as the client's
 * rate limiter lowers its rate: halved, doubling back a step a quiet minute.
 *
 * The estimate is of a steady cycle with the runs job's memory and the shared `apps.list`
 * (`collectors/runs-memory.ts`, `collectors/shared-apps.ts`), from the estate's counts learned at
 * start (the `total` of one small page of each list) and again every {@link ESTATE_RECOUNT_MS}, or
 * a few minutes after a count that failed (an estate that grows, a service down at start). The
 * benchmark counts the real requests (`npm run bench`, `requests_per_hour`).
 */
import type { SnapshotJob } from '../collectors/snapshot.js';
import { LABELS_MAX_AGE_MS } from '../collectors/shared-apps.js';
import { maintenanceRequests } from './maintenance-cost.js';

/**
 * The share of the rate limit the jobs are planned to fill. The rest is for what the plan does not
 * count and must never wait: a storm of new failures (their details and context: about three
 * requests each), remediation, retries, and the full walk of a first cycle after a restart.
 */
export const BUDGET_HEADROOM = 0.5;

/** A job is never stretched past this many ticks: past it, the next costliest is stretched too. */
export const MAX_STRETCH = 48;

/** The lowest share of the configured rate a run of 429s lowers the budget to. */
const MIN_THROTTLE = 1 / 64;

/** How long without a 429 before the budget doubles back toward the configured rate (as the client's limiter). */
const RECOVERY_MS = 60_000;

const HOUR_MS = 3_600_000;

/** How long a count of the estate stands before it is counted again. */
export const ESTATE_RECOUNT_MS = HOUR_MS;

/**
 * What the estate holds: the `total` of the first page of each list (every namespace read), and
 * the namespaces read one by one (1 when every namespace is read at once).
 */
export type Estate = Record<(typeof ESTATE_LISTS)[number] | 'namespaces', number>;

/** The lists whose `total` is counted for {@link Estate}, by the API client's name of each. */
export const ESTATE_LISTS = ['apps', 'runs', 'urls', 'backups', 'servers', 'installers'] as const;

/** What the cost of each job depends on besides the estate. */
export interface BudgetSettings {
  pageSize: number;
  /** The longest gap between two runs of each enabled job (ms). */
  intervals: ReadonlyMap<SnapshotJob, number>;
  /** `checks.failed_runs.failed_states` and `checks.stuck_runs.active_states`: one state list each a cycle. */
  runStateLists: number;
  /** `apps.get`, and `restore_points.list` with that check on. */
  readsPerApp: number;
}

/** The budget fitted, as {@link planBudget} answers it. */
export type BudgetPlan = ReturnType<typeof planBudget>;

/** The pages of a list of `n` records, at least one per namespace read. */
function pages(n: number, estate: Estate, pageSize: number): number {
  return Math.max(estate.namespaces, Math.ceil(n / pageSize));
}

/**
 * Requests of one steady cycle of each job. The runs job: one page of its walk down to the newest
 * run it saw, one page of each state list, and the details of the runs that changed (about one per
 * 1,000 apps a minute on the simulator's churn). The backups job: its walk of `backups.list`, about
 * two pages per page of apps. The `apps.list` the jobs share is a line of its own.
 */
export function cyclesCost(estate: Estate, settings: BudgetSettings): Map<SnapshotJob, number> {
  const ns = estate.namespaces;
  const listed = (n: number) => pages(n, estate, settings.pageSize);
  const cost: Record<SnapshotJob, () => number> = {
    runs: () => ns * (1 + settings.runStateLists) + Math.ceil(estate.apps / 1000),
    attention: () => ns,
    urls: () => listed(estate.urls),
    backups: () => 2 * listed(estate.apps),
    maintenance: () =>
      maintenanceRequests(estate.apps, settings.pageSize, settings.readsPerApp) - listed(estate.apps) + ns,
    servers: () => listed(estate.servers),
    installers: () => listed(estate.installers),
  };
  return new Map([...settings.intervals.keys()].map((job) => [job, cost[job]()]));
}

/** How often the shared `apps.list` is read: for labels every {@link LABELS_MAX_AGE_MS}, and per backups and maintenance cycle. */
function appsListInterval(intervals: ReadonlyMap<SnapshotJob, number>): number | undefined {
  const readers = [
    ...(intervals.has('runs') || intervals.has('urls') ? [LABELS_MAX_AGE_MS] : []),
    ...(['backups', 'maintenance'] as const).flatMap((j) => intervals.get(j) ?? []),
  ];
  if (readers.length === 0) return undefined;
  // Reads per hour add up (a window shared now and then is a bonus): the interval of their sum.
  return HOUR_MS / readers.reduce((sum, ms) => sum + HOUR_MS / ms, 0);
}

/**
 * Fits the jobs under `requestsPerSecond` × an hour × {@link BUDGET_HEADROOM}: stretches
 * maintenance first, then the other jobs from the costliest, never the runs job nor the shared
 * `apps.list` (its readers' own cadence), each at most {@link MAX_STRETCH}.
 */
export function planBudget(estate: Estate, settings: BudgetSettings, requestsPerSecond: number) {
  const costs = cyclesCost(estate, settings);
  const jobs = [...costs].map(([job, perCycle]) => jobLine(job, perCycle, settings.intervals.get(job)!));
  const appsEvery = appsListInterval(settings.intervals);
  if (appsEvery !== undefined)
    jobs.push(jobLine('apps.list', pages(estate.apps, estate, settings.pageSize), appsEvery));
  const total = () => jobs.reduce((sum, j) => sum + j.perHour, 0);
  const demandPerHour = total();
  const capacityPerHour = requestsPerSecond * 3600 * BUDGET_HEADROOM;
  const stretchable = jobs
    .filter((j) => j.job !== 'runs' && j.job !== 'apps.list')
    .sort((a, b) => Number(b.job === 'maintenance') - Number(a.job === 'maintenance') || b.perHour - a.perHour);
  for (const job of stretchable) {
    const over = total() - capacityPerHour;
    if (over <= 0) break;
    const unstretched = (job.perCycle * HOUR_MS) / job.intervalMs;
    const room = unstretched - over;
    job.stretch = room > 0 ? Math.min(MAX_STRETCH, Math.ceil(unstretched / room)) : MAX_STRETCH;
    job.perHour = unstretched / job.stretch;
  }
  const plannedPerHour = total();
  return {
    /** The rate in force (the configured one, or lower after 429s): requests per second. */
    requestsPerSecond,
    /** What the jobs may use an hour: the rate × an hour × {@link BUDGET_HEADROOM}. */
    capacityPerHour,
    /** What the jobs would ask for an hour on their schedules, none stretched. */
    demandPerHour,
    /** What they ask for stretched. */
    plannedPerHour,
    /** `plannedPerHour` over the rate × an hour: at most the headroom when it fits. */
    ratio: Number.isFinite(requestsPerSecond) ? plannedPerHour / (requestsPerSecond * 3600) : 0,
    /** Whether the plan fits under the capacity (false: even stretched as far as allowed, it does not). */
    fits: plannedPerHour <= capacityPerHour,
    jobs,
  };
}

/** A job's line of the budget before it is stretched: `perCycle` requests every `intervalMs`. */
function jobLine(job: SnapshotJob | 'apps.list', perCycle: number, intervalMs: number) {
  return {
    job,
    /** Requests of one steady cycle. */
    perCycle,
    intervalMs,
    /** Runs one tick in this many (1: every tick). */
    stretch: 1,
    /** Requests an hour, stretched. */
    perHour: (perCycle * HOUR_MS) / intervalMs,
  };
}

/** The plan in one sentence, for the log at start, `/readyz` and the console. */
export function describeBudget(plan: BudgetPlan): string {
  const rate = Number.isFinite(plan.requestsPerSecond)
    ? `${Math.round(plan.requestsPerSecond * 100) / 100}/s (${Math.round(plan.capacityPerHour)} an hour with headroom)`
    : 'no rate limit';
  const stretched = plan.jobs.filter((j) => j.stretch > 1);
  const perJob = plan.jobs.map((j) => `${j.job} ${Math.round(j.perHour)}`).join(', ');
  let text = `requests an hour: ${Math.round(plan.plannedPerHour)} of ${rate} (${perJob})`;
  if (stretched.length > 0) {
    text += `; to fit, ${stretched.map((j) => `${j.job} runs one tick in ${j.stretch}`).join(', ')}`;
    text += ` (asked for ${Math.round(plan.demandPerHour)})`;
  }
  if (!plan.fits)
    text += '; it still does not fit: raise api.requests_per_second if the service allows, or run jobs less often';
  return text;
}

/**
 * The running budget of one runtime: learns the estate at start, fits the plan, lowers it on a 429
 * until it clears, and tells the scheduler which ticks a stretched job skips.
 */
export class RequestBudget {
  #estate: Estate | undefined;
  #plan: BudgetPlan | undefined;
  /** The share of the configured rate in force: 1, or less after 429s. */
  #throttle = 1;
  #movedAt = 0;
  #learnedAt: number | undefined;
  /** Counts of the estate that failed in a row (the first is said, the others at debug). */
  failedCounts = 0;

  constructor(
    /** What each job's cost depends on besides the estate (the maintenance job's warning reads it too). */
    readonly settings: BudgetSettings,
    private readonly configuredRps: number,
    private readonly now: () => number,
    /** Told whenever the plan changes (the metrics gauge, a log line). */
    private readonly onPlan: (plan: BudgetPlan) => void = () => undefined,
  ) {}

  /** The plan in force, or undefined before the estate is known. */
  get plan(): BudgetPlan | undefined {
    this.#recover();
    return this.#plan;
  }

  /** Whether the estate is due a count: never counted yet, or counted {@link ESTATE_RECOUNT_MS} ago. */
  get countDue(): boolean {
    return this.#learnedAt === undefined || this.now() - this.#learnedAt >= ESTATE_RECOUNT_MS;
  }

  /** Fits the plan to the estate as counted. */
  learn(estate: Estate): BudgetPlan {
    this.#estate = estate;
    this.#learnedAt = this.now();
    this.failedCounts = 0;
    return this.#replan();
  }

  /** A 429 from the service: the budget halves (down to a floor) until a quiet minute. */
  throttled(): void {
    if (this.now() - this.#movedAt < 1_000 && this.#throttle < 1) return; // one burst of 429s is one step
    this.#move(Math.max(MIN_THROTTLE, this.#throttle / 2));
  }

  /** Whether a job's tick at `slot` (ms) runs: a stretched job runs one tick in its stretch, by the slot's time. */
  admits(job: string, slot: number): boolean {
    const line = this.plan?.jobs.find((j) => j.job === job);
    if (!line || line.stretch <= 1) return true;
    return Math.floor(slot / line.intervalMs) % line.stretch === 0;
  }

  /** The gap between two runs of `job` as stretched (readiness allows for it). */
  intervalMs(job: string, scheduled: number | undefined): number | undefined {
    const stretch = this.plan?.jobs.find((j) => j.job === job)?.stretch ?? 1;
    return scheduled === undefined ? undefined : scheduled * stretch;
  }

  #recover(): void {
    if (this.#throttle >= 1 || this.now() - this.#movedAt < RECOVERY_MS) return;
    this.#move(Math.min(1, this.#throttle * 2));
  }

  /** The share of the configured rate in force is `throttle` from now: the plan fitted to it. */
  #move(throttle: number): void {
    this.#throttle = throttle;
    this.#movedAt = this.now();
    if (this.#estate) this.#replan();
  }

  #replan(): BudgetPlan {
    if (!this.#estate) throw new Error('request budget: the estate is not known yet');
    const plan = planBudget(this.#estate, this.settings, this.configuredRps * this.#throttle);
    this.#plan = plan;
    this.onPlan(plan);
    return plan;
  }
}
