/**
 * Every Prometheus metric deploy-watchdog exports, in one place. The composition root builds one
 * `Metrics` (with its own prom-client Registry: no global state) and hands it to the stages that
 * record into it; `/metrics` renders its registry. Below every stage (here in lib/), so a stage
 * that counts never imports the listener.
 *
 * Names follow Prometheus' conventions so that `promtool check metrics` passes and the usual
 * dashboards find what they look for: our own metrics start with `deploy_watchdog_`; Node's and the
 * process's keep the standard names prom-client gives them (`process_cpu_seconds_total`,
 * `nodejs_heap_size_used_bytes`), without our prefix. The job a metric is about is the label
 * `source`: `job` is Prometheus' own target label, and a scrape would rename ours `exported_job`.
 */
import { Counter, Gauge, Histogram, Registry, collectProcessMetrics } from './prom-client-core.js';
import { packageVersion } from './package-version.js';

/**
 * prom-client's default gauges whose names end in `_total`, which Prometheus keeps for counters
 * (`promtool check metrics` refuses them). Each is the sum of a gauge kept beside it, by type:
 * `sum(nodejs_active_handles)` is `nodejs_active_handles_total`.
 */
const TOTAL_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Options for {@link Metrics}. */
export interface MetricsOptions {
  /** Also export the process metrics (CPU, memory, event loop, handles). Default true. */
  processMetrics?: boolean;
}

/** The metric set of one watchdog process. */
export class Metrics {
  readonly registry = new Registry();

  /** Version of the running build, as an info metric (always 1) to join other metrics on. */
  readonly buildInfo = this.#in(Gauge, {
    name: 'deploy_watchdog_build_info',
    help: 'The running deploy-watchdog build; always 1, its version in the label.',
    labelNames: ['version'] as const,
  });

  /** Job cycles by job (the `source` label) and outcome (ok, failed, disabled). */
  readonly cycles = this.#in(Counter, {
    name: 'deploy_watchdog_cycles_total',
    help: 'Job cycles run, by source (the job) and outcome.',
    labelNames: ['source', 'outcome'] as const,
  });

  /** How long a job cycle took, read to commit. */
  readonly cycleDuration = this.#in(Histogram, {
    name: 'deploy_watchdog_cycle_duration_seconds',
    help: 'Duration of a job cycle, from the first read to the committed state, by source (the job).',
    labelNames: ['source'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  });

  /**
   * Ticks of a job skipped because its previous read was still running (it overran its schedule and
   * runs to its end). Labelled `source` like every per-job metric here (see above): the issue
   * named it `{job}`, which a scrape would rename `exported_job`.
   */
  readonly jobOverruns = this.#in(Counter, {
    name: 'deploy_watchdog_job_overruns_total',
    help: 'Scheduled ticks of a job skipped because its previous read was still running, by source (the job).',
    labelNames: ['source'] as const,
  });

  /**
   * The request budget (`app/request-budget.ts`): the requests an hour the jobs are planned to
   * make, stretched to fit, over what `api.requests_per_second` allows an hour (at most the
   * headroom when it fits); 0 without a rate limit or before the estate is counted.
   */
  readonly requestBudgetRatio = this.#in(Gauge, {
    name: 'deploy_watchdog_request_budget_ratio',
    help: 'Requests an hour the jobs are planned to make (stretched to fit) over what api.requests_per_second allows an hour; lowered by 429s until they clear.',
  });

  /** How many ticks of its schedule a job runs one of, to fit the request budget (1: every tick). */
  readonly jobStretch = this.#in(Gauge, {
    name: 'deploy_watchdog_job_stretch',
    help: 'A job runs one tick of its schedule in this many, to fit the request budget (1: every tick; never the runs job), by source (the job).',
    labelNames: ['source'] as const,
  });

  /** Unix time of the last cycle of a job that completed. */
  readonly lastSuccess = this.#in(Gauge, {
    name: 'deploy_watchdog_last_success_timestamp_seconds',
    help: 'Unix time of the last cycle of a job that completed, by source (the job).',
    labelNames: ['source'] as const,
  });

  /** API requests by function and HTTP status (`error` when no answer came). */
  readonly apiRequests = this.#in(Counter, {
    name: 'deploy_watchdog_api_requests_total',
    help: 'Requests sent to the Deployment Management Service API, by function and HTTP status.',
    labelNames: ['function', 'status'] as const,
  });

  /** API request latency by function. */
  readonly apiLatency = this.#in(Histogram, {
    name: 'deploy_watchdog_api_request_duration_seconds',
    help: 'Latency of API requests, by function.',
    labelNames: ['function'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });

  /** Records a read set aside (`api/quarantine.ts`), per job and reason, counted every cycle they are. */
  readonly recordsSkipped = this.#in(Counter, {
    name: 'deploy_watchdog_records_skipped_total',
    help: 'Records a job read set aside (refused by id, unparseable, or a value beyond the stated ones), by reason; counted each cycle.',
    labelNames: ['source', 'reason'] as const,
  });

  /** API errors by error code (the service's code, or timeout / connection / bad_answer). */
  readonly apiErrors = this.#in(Counter, {
    name: 'deploy_watchdog_api_errors_total',
    help: 'API errors, by function and error code.',
    labelNames: ['function', 'code'] as const,
  });

  /** Open (firing) alerts by check and severity; set after each cycle. */
  readonly openAlerts = this.#in(Gauge, {
    name: 'deploy_watchdog_open_alerts',
    help: 'Firing alerts, by check and severity.',
    labelNames: ['check', 'severity'] as const,
  });

  /** Of the firing alerts, those someone acknowledged (their repeats stop), by check and severity; set after each cycle. */
  readonly acknowledgedAlerts = this.#in(Gauge, {
    name: 'deploy_watchdog_acknowledged_alerts',
    help: 'Firing alerts someone acknowledged, by check and severity.',
    labelNames: ['check', 'severity'] as const,
  });

  /**
   * Firing alerts whose resolution the resolve guard holds (`alerts.resolve_guard`), by job: a
   * complete answer that would resolve too many at once, not yet confirmed. 0 when none is held.
   */
  readonly resolutionsHeld = this.#in(Gauge, {
    name: 'deploy_watchdog_resolutions_held',
    help: 'Alerts whose resolution is held until an implausible answer is confirmed, by source (the job).',
    labelNames: ['source'] as const,
  });

  /**
   * Notifications by channel and outcome: sent, retry, failed, expired, muted; `partial` (sent, but
   * some recipients refused it) and `unconfirmed` (sent, its receipt never confirmed) on top.
   */
  readonly notifications = this.#in(Counter, {
    name: 'deploy_watchdog_notifications_total',
    help: 'Notification delivery attempts, by channel and outcome.',
    labelNames: ['channel', 'outcome'] as const,
  });

  /**
   * Time to alert, by check: from the record's own time of a problem (a run's `updated_at`, a URL's
   * `public_checked_at`, an app's `updated_at`: `notify/time-to-alert.ts`) to the first successful
   * delivery of its firing notification. Buckets around the minute that matters, up to a day (a
   * problem older than the watchdog's first read of it lands in the last ones).
   */
  readonly timeToAlert = this.#in(Histogram, {
    name: 'deploy_watchdog_time_to_alert_seconds',
    help: "From a record's own time of its problem to the first delivery of the firing notification, by check.",
    labelNames: ['check'] as const,
    buckets: [5, 10, 15, 30, 45, 60, 90, 120, 180, 300, 600, 1800, 3600, 14400, 86400],
  });

  /** Outbox rows due to be delivered, by channel. */
  readonly outboxWaiting = this.#in(Gauge, {
    name: 'deploy_watchdog_outbox_waiting',
    help: 'Notifications due to be delivered, waiting in the outbox, by channel.',
    labelNames: ['channel'] as const,
  });

  /** Outbox rows held back on purpose (a silence, a mute window, an inhibition, a repeat's interval), by channel. */
  readonly outboxHeld = this.#in(Gauge, {
    name: 'deploy_watchdog_outbox_held',
    help: 'Notifications held back in the outbox by a silence, a mute window, an inhibition, a repeat interval or a context read, by channel.',
    labelNames: ['channel'] as const,
  });

  /** Remediation decisions by policy, action and outcome (acted, skipped, dry_run, failed, succeeded). */
  readonly remediation = this.#in(Counter, {
    name: 'deploy_watchdog_remediation_actions_total',
    help: 'Remediation decisions, by policy, action and outcome.',
    labelNames: ['policy', 'action', 'outcome'] as const,
  });

  /**
   * 1 while this process leads (runs the cycles, delivery, remediation), 0 while it follows. With
   * a PostgreSQL state one replica leads; with a SQLite file the one process leads while it runs.
   */
  readonly leader = this.#in(Gauge, {
    name: 'deploy_watchdog_leader',
    help: 'Whether this replica leads (1: it runs the checks, delivery and remediation) or follows (0).',
  });

  /** 0 after a reload (SIGHUP) was refused and the running config kept, as Prometheus' own gauge says. */
  readonly configReloadSuccessful = this.#in(Gauge, {
    name: 'deploy_watchdog_config_last_reload_successful',
    help: 'Whether the last configuration reload (SIGHUP) was applied (1) or refused, the running configuration kept (0).',
  });

  constructor(options: MetricsOptions = {}) {
    this.buildInfo.set({ version: packageVersion() }, 1);
    this.configReloadSuccessful.set(1); // the config it started with
    if (options.processMetrics ?? true) {
      collectProcessMetrics(this.registry);
      for (const name of TOTAL_GAUGES) this.registry.removeSingleMetric(name);
    }
  }

  /** A metric of `kind` registered in this set's registry (never prom-client's global one). */
  #in<C, M>(kind: new (configuration: C & { registers: Registry[] }) => M, configuration: C): M {
    return new kind({ ...configuration, registers: [this.registry] });
  }

  /** The registry in Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
