/**
 * The composition root: builds every stage from one `Config` and runs them. One `Watchdog` owns
 * one open state file for its whole life; everything else (API client, channels, notifier,
 * scheduler, remediation) is a "runtime" built from the config, rebuilt on reload.
 *
 *   start()     whoami, the health listener, the delivery loop, the scheduler, a first cycle of every job
 *   runOnce()   one cycle of every enabled job (or the named ones), one after another, for `check` and tests
 *   reload()    a new runtime from a new config; the store and the health listener stay
 *   stop()      finish the cycle in progress within a deadline, flush the outbox, close the database
 */
import { setMaxListeners } from 'node:events';
import type { Dispatcher } from 'undici';
import { AlertStore } from '../alerts/alert-store.js';
import { closeRetired } from '../alerts/close-retired.js';
import { commitFindings, sourceJobKey } from '../alerts/commit-findings.js';
import { createApiClient, type ApiClient, type ApiObserver, type ApiClientOptions } from '../api/client.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import { resolveNamespaces, type NamespaceScope } from '../collectors/resolve-namespaces.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import { detectorOptionsFromConfig, detectorsFor, type DetectorOptions } from '../detectors/registry.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { buildChannels, closeChannels } from '../notify/build-channels.js';
import { messageLinks } from '../notify/message-links.js';
import type { Channel } from '../notify/channels/channel.js';
import type { DeliveryReport, FlushReport } from '../notify/delivery.js';
import { createNotifier, type Notifier } from '../notify/notifier.js';
import type { createRemediation } from '../remediation/create-remediation.js';
import type { Remediator } from '../remediation/remediator.js';
import type { PassReport } from '../remediation/send-and-follow.js';
import { startHealthServer, type HealthServer, type ReadinessCheck } from '../server/health-server.js';
import { Metrics } from '../server/metrics.js';
import { pruneState } from '../state/retention.js';
import { claimLease, LEASE_TTL_MS, type RunnerLease } from '../state/runner-lease.js';
import { Store } from '../state/store.js';
import { describeError } from './describe-error.js';
import { CycleDeadlineError, runJobCycle, updateOpenAlerts, type CycleDeps, type JobReport } from './job-cycle.js';
import type { Logger } from '../lib/logger.js';
import { maintenanceCost, maintenanceCostWarning } from './maintenance-cost.js';
import { retiredByConfig } from './retired-by-config.js';
import { Scheduler } from './scheduler.js';
import { SourceHealth } from './source-health.js';

/** Options of {@link Watchdog.open}. */
export interface WatchdogOptions {
  config: Config;
  logger: Logger;
  /** Default the system clock; tests share a ManualClock with the simulator. */
  clock?: Clock;
  /** undici dispatcher for the API client; by default the client owns a keep-alive Agent. */
  dispatcher?: Dispatcher;
  /** Default: a new registry with process metrics. */
  metrics?: Metrics;
  /** Backoff tunables of the API client (its delays run on the clock). */
  apiRetry?: ApiClientOptions['retry'];
  /** Builds remediation from each running configuration (`createRemediation`); absent: no remediation. */
  remediation?: typeof createRemediation;
  /** The `--config` the commands in messages must give (`ChannelDeps.commandConfigFile`); absent: none. */
  commandConfigFile?: string | undefined;
  /**
   * Claim the state file for this command (`state/runner-lease.ts`): `run` and `check` do, so two
   * processes never deliver the same outbox. Absent (tests, in-process tools): no claim.
   */
  lease?: 'run' | 'check';
}

/** What {@link Watchdog.runOnce} did. */
export interface CycleReport {
  jobs: JobReport[];
  /** Every job read its source completely (disabled jobs count as not complete). */
  complete: boolean;
  /** Some job failed because of the configuration (a namespace the token does not reach). */
  configProblem: boolean;
  /** Alert events written, all jobs. */
  events: number;
}

/** What {@link Watchdog.stop} did. */
export interface StopReport {
  /** The cycles in progress finished before the deadline (else they were aborted, writing nothing). */
  cyclesFinished: boolean;
  flush: FlushReport | undefined;
}

/** The parts built from one configuration. */
interface Runtime {
  config: Config;
  client: ApiClient;
  channels: Map<string, Channel>;
  notifier: Notifier;
  scheduler: Scheduler;
  remediation: Remediator | undefined;
  deps: CycleDeps;
  /** Enabled jobs with their cron expression. */
  jobs: Map<SnapshotJob, string>;
}

/** How long a failed whoami stands for every job before it is asked again. */
const NAMESPACES_RETRY_MS = 30_000;

/** Retention runs once a day at a quiet minute, and once at start. */
const RETENTION_CRON = '17 3 * * *';
const RETENTION_JOB = 'retention';

/** The running daemon (or, for `check`, the parts of it that run one cycle). */
export class Watchdog {
  readonly metrics: Metrics;
  readonly store: Store;
  readonly #alerts: AlertStore;
  readonly #health: SourceHealth;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #options: WatchdogOptions;
  #runtime: Runtime;
  #healthServer: HealthServer | undefined;
  #healthListen: string | null = null;
  readonly #inFlight = new Map<SnapshotJob, Promise<JobReport>>();
  /** Aborted when shutdown's deadline passes with a cycle still running. */
  readonly #hardStop = new AbortController();
  #started = false;
  /** The runtime whose switched-off checks' alerts were last closed (see {@link Watchdog.runOnce}). */
  #retiredClosedFor: Runtime | undefined;
  #stopping: Promise<StopReport> | undefined;
  /** Gives up the state file's lease, when this process holds one. */
  #releaseLease: (() => void) | undefined;

  private constructor(options: WatchdogOptions, store: Store) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger;
    this.metrics = options.metrics ?? new Metrics();
    this.store = store;
    this.#alerts = new AlertStore(store);
    this.#health = new SourceHealth(store);
    this.#runtime = this.#build(options.config);
  }

  /**
   * Opens the state file and builds every stage from the config. Throws `StoreError` when the
   * state file cannot be used, and the notifier's errors for unusable routes.
   */
  static open(options: WatchdogOptions): Watchdog {
    const store = Store.open(options.config.state.path, { logger: options.logger, clock: options.clock });
    let lease: RunnerLease | undefined;
    try {
      if (options.lease) lease = claimLease(store, options.lease);
      const watchdog = new Watchdog(options, store);
      if (lease) watchdog.#holdLease(lease);
      return watchdog;
    } catch (err) {
      lease?.release();
      store.close();
      throw err;
    }
  }

  /** Renews the state file's lease while this process works on it (a real timer: the lease is between processes). */
  #holdLease(lease: RunnerLease): void {
    const timer = setInterval(() => {
      try {
        lease.renew();
      } catch (err) {
        this.#log.warn({ err }, 'cannot renew the lease on the state file; another run or check may start');
      }
    }, LEASE_TTL_MS / 3);
    timer.unref();
    this.#releaseLease = () => {
      clearInterval(timer);
      lease.release();
    };
  }

  /** The configuration in force. */
  get config(): Config {
    return this.#runtime.config;
  }

  /** The enabled jobs, in run order. */
  get jobs(): SnapshotJob[] {
    return [...this.#runtime.jobs.keys()];
  }

  /** The address the health listener bound, when it runs. */
  get healthAddress(): { host: string; port: number } | undefined {
    return this.#healthServer?.address;
  }

  /**
   * Starts the daemon: asks whoami which namespaces to read (a configured namespace the token does
   * not reach throws `NamespaceError`; an unreachable API does not stop the start, the cycles retry),
   * prunes old state, starts the health listener, the delivery loop and the scheduler, and runs a
   * first cycle of every job at once so alerts and readiness do not wait for the first tick.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    await this.#checkNamespaces(this.#runtime);
    this.#started = true;
    this.#health.enableAll();
    this.#prune();
    this.#resolveOffJobs(this.#runtime);
    this.#closeRetired(this.#runtime);
    updateOpenAlerts(this.#runtime.deps);
    await this.#syncHealthServer(this.#runtime.config);
    this.#startRuntime(this.#runtime);
    void this.#warnMaintenanceCost(this.#runtime);
    this.#log.info({ jobs: Object.fromEntries(this.#runtime.jobs) }, 'deploy-watchdog started');
  }

  /**
   * One cycle of each named job (default: every enabled job), one job after another, then the
   * reports in job order. One at a time so that only one job's snapshot is alive at once: the
   * peak memory of `check` is the largest job's, not the sum of all six (see docs/benchmarks.md).
   * The requests of a job already run `api.concurrency` at a time, so the cycle takes little
   * longer. (The daemon's scheduled jobs stay independent: a slow job must not hold back the
   * others' alerts.) A job already running is not started twice: its cycle's report is returned.
   * Throws a RangeError naming an unknown job.
   */
  async runOnce(jobs?: readonly string[]): Promise<CycleReport> {
    const names = jobs ?? this.jobs;
    for (const name of names) {
      if (!(JOB_NAMES as string[]).includes(name)) {
        throw new RangeError(`unknown job "${name}" (jobs: ${JOB_NAMES.join(', ')})`);
      }
    }
    // `check` never starts the daemon: close here what the configuration stopped looking at.
    // Once per configuration: nothing of a check switched off can open again while it runs.
    if (!this.#started && this.#retiredClosedFor !== this.#runtime) this.#closeRetired(this.#runtime);
    const reports: JobReport[] = [];
    for (const job of names) reports.push(await this.#cycle(job as SnapshotJob));
    return {
      jobs: reports,
      complete: reports.every((r) => r.outcome === 'ok'),
      configProblem: reports.some((r) => r.configProblem === true),
      events: reports.reduce((sum, r) => sum + r.events, 0),
    };
  }

  /**
   * One pass of remediation's action loop, for `check`, where no loop runs: sends what the cycles
   * planned, records the answers, follows the runs started earlier (a `check` from cron follows
   * them run after run). Undefined when remediation is off. Kept apart from {@link runOnce} so a
   * cycle alone still only plans, as it does in the daemon.
   */
  async remediateOnce(): Promise<PassReport | undefined> {
    return this.#runtime.remediation?.executePending(this.#hardStop.signal);
  }

  /** One delivery round now (`check`, tests). */
  deliverDue(): Promise<DeliveryReport> {
    return this.#runtime.notifier.deliverDue(this.#clock.now());
  }

  /**
   * Applies a new configuration: builds the new runtime first (a failure keeps the old one running
   * and throws), then stops the old one after its cycles in progress, and starts the new one with
   * every disabled check enabled again. The state file stays open: `state.path` changes need a restart.
   */
  async reload(next: Config): Promise<void> {
    if (this.#stopping) return;
    let config = next;
    if (next.state.path !== this.#runtime.config.state.path) {
      this.#log.warn(
        { kept: this.#runtime.config.state.path },
        'state.path changed: it takes effect at the next restart',
      );
      config = { ...next, state: { ...next.state, path: this.#runtime.config.state.path } };
    }
    const fresh = this.#build(config);
    try {
      await this.#checkNamespaces(fresh);
    } catch (err) {
      await this.#closeRuntime(fresh);
      throw err;
    }
    const old = this.#runtime;
    await old.scheduler.stop();
    await Promise.all(this.#inFlight.values());
    await old.notifier.stop();
    await old.remediation?.stop(0);
    await this.#closeRuntime(old);
    this.#runtime = fresh;
    this.#log.level = config.log.level;
    this.#health.enableAll();
    this.#resolveOffJobs(fresh);
    this.#closeRetired(fresh);
    if (this.#started) {
      await this.#syncHealthServer(config);
      this.#startRuntime(fresh);
      void this.#warnMaintenanceCost(fresh);
    }
    this.#log.info({ jobs: Object.fromEntries(fresh.jobs) }, 'configuration reloaded');
  }

  /**
   * Ends whatever reads now, without waiting: the cycles in progress are aborted (writing nothing)
   * and so is a start still asking whoami. For a stop asked for before the daemon is up, and for
   * `check` on SIGTERM (cron and Kubernetes stop a job so), where the outbox keeps what is not sent.
   */
  interrupt(reason = 'interrupted'): void {
    if (!this.#hardStop.signal.aborted) this.#hardStop.abort(new Error(reason));
  }

  /**
   * Stops: no new cycles; the cycles in progress get until `deadlineMs` (after which they are
   * aborted and write nothing); what is due in the outbox is sent with the time left; then the
   * listener, the API client and the channels close, and the database is checkpointed and closed.
   * Calling it again returns the same promise.
   */
  stop(deadlineMs: number): Promise<StopReport> {
    this.#stopping ??= this.#stop(deadlineMs);
    return this.#stopping;
  }

  async #stop(deadlineMs: number): Promise<StopReport> {
    const rt = this.#runtime;
    const startedAt = this.#clock.now();
    const cancel = new AbortController();
    const deadline = this.#clock.sleep(deadlineMs, cancel.signal).then(
      () => 'deadline' as const,
      () => 'cancelled' as const,
    );
    let cyclesFinished = true;
    let flush: FlushReport | undefined;
    try {
      await rt.scheduler.stop();
      const cycles = Promise.all(this.#inFlight.values()).then(() => 'done' as const);
      if ((await Promise.race([cycles, deadline])) !== 'done') {
        cyclesFinished = false;
        this.#log.warn(
          { jobs: [...this.#inFlight.keys()] },
          'shutdown deadline reached during a cycle; aborting it (nothing of it is written)',
        );
        this.#hardStop.abort(new Error('shutdown deadline reached'));
        await cycles;
      }
      const left = () => Math.max(0, deadlineMs - (this.#clock.now() - startedAt));
      flush = await rt.notifier.flush(left());
      await rt.remediation?.stop(left());
    } finally {
      cancel.abort();
      await this.#healthServer?.close();
      this.#healthServer = undefined;
      await this.#closeRuntime(rt);
      try {
        // Fold the WAL back into the file so the database is one self-contained file at rest.
        this.store.checkpoint();
      } catch (err) {
        this.#log.warn({ err }, 'cannot checkpoint the state file before closing');
      }
      try {
        this.#releaseLease?.();
      } catch (err) {
        this.#log.warn({ err }, 'cannot release the lease on the state file; it expires by itself');
      }
      this.store.close();
      this.#log.info(
        { cyclesFinished, sent: flush?.sent ?? 0, waiting: flush?.waiting ?? 0 },
        'deploy-watchdog stopped',
      );
    }
    return { cyclesFinished, flush };
  }

  #cycle(job: SnapshotJob): Promise<JobReport> {
    const running = this.#inFlight.get(job);
    if (running) return running;
    const stop = this.#cycleSignal(job, this.#runtime);
    const cycle = runJobCycle(this.#runtime.deps, job, stop.signal)
      .finally(stop.release)
      .catch((err: unknown): JobReport => {
        // A storage fault (disk full, locked): nothing was committed; the next cycle tries again.
        this.#log.error({ err, job }, 'cycle failed to write its result');
        this.metrics.cycles.inc({ job, outcome: 'failed' });
        return { job, outcome: 'failed', reason: describeError(err), findings: 0, events: 0, durationMs: 0 };
      })
      .finally(() => this.#inFlight.delete(job));
    this.#inFlight.set(job, cycle);
    return cycle;
  }

  /**
   * The stop signal of one job cycle: aborted with the hard stop, or with a {@link CycleDeadlineError}
   * when the job's deadline (`jobs.deadline`) passes first. Every request in flight and every wait
   * for a token or a retry listens on the signal it is given, so handing the shared hard-stop signal
   * to all jobs put up to six jobs × `api.concurrency` listeners on it at once (Node warns past 10).
   * Derived per cycle, the shared signal carries one listener per running job, and a cycle's own
   * signal at most one per request in flight (`concurrency`) plus a few.
   */
  #cycleSignal(job: SnapshotJob, rt: Runtime): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    // Per request in flight, a page read ahead of each walk, and the waits of the rate limit and whoami.
    setMaxListeners(2 * rt.config.api.concurrency + 16, controller.signal);
    const hard = this.#hardStop.signal;
    const onStop = () => controller.abort(hard.reason);
    if (hard.aborted) onStop();
    else hard.addEventListener('abort', onStop, { once: true });
    const deadlineMs = rt.config.jobs.deadline === 'auto' ? rt.scheduler.intervalMs(job) : rt.config.jobs.deadline;
    const timer = new AbortController();
    if (deadlineMs !== undefined && deadlineMs > 0) {
      this.#clock.sleep(deadlineMs, timer.signal).then(
        () => controller.abort(new CycleDeadlineError(job, deadlineMs)),
        () => undefined, // released before the deadline
      );
    }
    return {
      signal: controller.signal,
      release: () => {
        hard.removeEventListener('abort', onStop);
        timer.abort();
      },
    };
  }

  /** Builds a runtime (nothing started, nothing sent). */
  #build(config: Config): Runtime {
    const clock = this.#clock;
    const logger = this.#log;
    const metrics = this.metrics;
    const observer: ApiObserver = (a) => {
      metrics.apiRequests.inc({ function: a.fn, status: a.status === undefined ? 'error' : String(a.status) });
      metrics.apiLatency.observe({ function: a.fn }, a.durationMs / 1000);
      if (a.errorCode !== undefined) metrics.apiErrors.inc({ function: a.fn, code: a.errorCode });
    };
    const client = createApiClient({
      baseUrl: config.api.base_url,
      token: config.api.token,
      requestsPerSecond: config.api.requests_per_second,
      timeoutMs: config.api.timeout,
      maxRetries: config.api.max_retries,
      pageSize: config.api.page_size,
      maxAnswerBytes: config.api.max_answer_size,
      maxAnswerValues: config.api.max_answer_values,
      maxListItems: config.api.max_list_items,
      // A walk with a page ahead is two requests in flight: within what api.concurrency allows.
      readAhead: config.api.concurrency > 1,
      clock,
      logger: logger.child({ stage: 'api' }),
      observer,
      ...(this.#options.dispatcher ? { dispatcher: this.#options.dispatcher } : {}),
      ...(this.#options.apiRetry ? { retry: this.#options.apiRetry } : {}),
    });
    let channels: Map<string, Channel> | undefined;
    try {
      channels = buildChannels(config.notify.channels, {
        logger: logger.child({ stage: 'channel' }),
        clock,
        commandConfigFile: this.#options.commandConfigFile,
        links: messageLinks(config),
      });
      const notifier = createNotifier({
        store: this.store,
        notify: config.notify,
        alerts: config.alerts,
        channels,
        clock,
        logger,
        metrics,
      });
      const detectorOptions = detectorOptionsFromConfig(config.checks);
      const jobs = enabledJobs(config, detectorOptions);
      const remediation = this.#options.remediation?.({
        config,
        client,
        store: this.store,
        notifier,
        clock,
        logger,
        metrics,
      });
      const lifecycle: CycleDeps['lifecycle'] = {
        forCycles: config.alerts.for,
        // The notify router drops the repeats a route does not want yet; the lifecycle must repeat
        // at least as often as the most eager route.
        repeatIntervalMs: Math.min(config.alerts.repeat_interval, notifier.lifecycleRepeatIntervalMs),
        resolveGuard: {
          minAlerts: config.alerts.resolve_guard.min_alerts,
          maxShare: config.alerts.resolve_guard.max_share,
          confirmCycles: config.alerts.resolve_guard.confirm_cycles,
        },
      };
      // One whoami for every job. A failed one is kept for a while: with the API down, six jobs
      // each waiting out whoami's retries would make `check` take six times as long.
      let scope: Promise<NamespaceScope> | undefined;
      let askAgainAt = 0;
      const namespaces = (signal?: AbortSignal): Promise<NamespaceScope> => {
        if (scope === undefined || (askAgainAt > 0 && clock.now() >= askAgainAt)) {
          askAgainAt = 0;
          scope = resolveNamespaces(client, config.api.namespaces, this.#hardStop.signal);
          scope.catch(() => (askAgainAt = clock.now() + NAMESPACES_RETRY_MS));
        }
        return untilAborted(scope, signal);
      };
      const deps: CycleDeps = {
        config,
        client,
        alerts: this.#alerts,
        health: this.#health,
        notifier,
        metrics,
        clock,
        logger,
        detectorOptions,
        lifecycle,
        namespaces,
        disabled: new Map(),
        stages: remediation ? [notifier, remediation] : [notifier],
      };
      const scheduler = new Scheduler({
        jobs: [...[...jobs].map(([name, cron]) => ({ name, cron })), { name: RETENTION_JOB, cron: RETENTION_CRON }],
        jitterMs: config.jobs.jitter,
        run: async (job) => {
          if (job === RETENTION_JOB) this.#prune();
          else await this.#cycle(job as SnapshotJob);
        },
        logger,
      });
      return { config, client, channels, notifier, scheduler, remediation, deps, jobs };
    } catch (err) {
      void client.close();
      if (channels) void closeChannels(channels.values());
      throw err;
    }
  }

  #startRuntime(rt: Runtime): void {
    rt.notifier.start();
    rt.remediation?.start();
    rt.scheduler.start();
    void this.#firstCycles(rt);
  }

  /**
   * A first cycle of every job at once, so alerts and readiness do not wait for the first tick;
   * the servers job before the others (see `COLLECTORS`), so that a bad server's alert is on record
   * before its apps' alerts are delivered and inhibition can hold them.
   */
  async #firstCycles(rt: Runtime): Promise<void> {
    if (rt.jobs.has('servers')) await this.#cycle('servers');
    if (this.#runtime !== rt || this.#stopping) return;
    for (const job of rt.jobs.keys()) if (job !== 'servers') void this.#cycle(job);
  }

  async #closeRuntime(rt: Runtime): Promise<void> {
    await rt.client.close().catch(() => undefined);
    await closeChannels(rt.channels.values());
  }

  /** Fails early on a configured namespace the token does not reach; an unreachable API is left to the cycles. */
  async #checkNamespaces(rt: Runtime): Promise<void> {
    try {
      await rt.deps.namespaces();
    } catch (err) {
      if (err instanceof Error && err.name === 'NamespaceError') throw err;
      if (this.#hardStop.signal.aborted) return; // stopped while asking: nothing to say
      this.#log.warn({ err }, 'cannot ask whoami now; every cycle will try again');
    }
  }

  /** A job switched off has nothing left to say about its source: its source alert resolves. */
  #resolveOffJobs(rt: Runtime): void {
    const now = this.#clock.now();
    const off = JOB_NAMES.filter((job) => !rt.jobs.has(job));
    if (off.length === 0) return;
    // Only the outbox takes these: remediation decides on a cycle's reads, and none ran here.
    const events = this.store.transaction(() =>
      off.flatMap((job) => {
        const key = sourceJobKey(job);
        const write = () => [{ job: key, findings: [], options: { ...rt.deps.lifecycle, forCycles: 1 } }];
        return commitFindings(this.#alerts, { job: key, now, write }, [rt.notifier]);
      }),
    );
    if (events.length > 0)
      this.#log.info({ jobs: off, events: events.length }, 'source alerts of jobs switched off resolved');
  }

  /**
   * Closes, without a notification, the alerts of checks the configuration switched off (see
   * `src/alerts/close-retired.ts`): nothing will ever resolve them, and a "resolved" would claim a
   * problem is over that nobody looked at.
   */
  #closeRetired(rt: Runtime): void {
    const closed = this.store.transaction(() =>
      closeRetired(this.#alerts, retiredByConfig(rt.config, rt.deps.detectorOptions), this.#clock.now()),
    );
    this.#retiredClosedFor = rt;
    if (closed.length === 0) return;
    const byReason: Record<string, number> = {};
    for (const c of closed) byReason[`${c.check}: ${c.reason}`] = (byReason[`${c.check}: ${c.reason}`] ?? 0) + 1;
    this.#log.info({ closed: byReason }, 'open alerts of checks switched off closed, without notification');
    updateOpenAlerts(rt.deps);
  }

  /**
   * Counts the apps (one `apps.list?limit=1` per namespace read) and warns when the maintenance
   * job, which reads each of them, would take more than half the request budget (see
   * `maintenance-cost.ts`). Never fails the start: an unreadable API leaves it unsaid.
   */
  async #warnMaintenanceCost(rt: Runtime): Promise<void> {
    const intervalMs = rt.jobs.has('maintenance') ? rt.scheduler.intervalMs('maintenance') : undefined;
    if (intervalMs === undefined) return;
    try {
      const scope = await rt.deps.namespaces();
      let apps = 0;
      for (const namespace of scope.namespaces ?? [undefined]) {
        const page = await rt.client.apps.list(namespace === undefined ? { limit: 1 } : { limit: 1, namespace }, {
          signal: this.#hardStop.signal,
        });
        apps += page.total;
      }
      const cost = maintenanceCost(apps, {
        pageSize: rt.config.api.page_size,
        requestsPerSecond: rt.config.api.requests_per_second,
        intervalMs,
      });
      const warning = maintenanceCostWarning(cost);
      if (warning)
        this.#log.warn({ apps: cost.apps, requests: cost.requests, readMs: cost.readMs, intervalMs }, warning);
      else this.#log.debug({ apps: cost.apps, readMs: cost.readMs, intervalMs }, 'maintenance job cost');
    } catch (err) {
      this.#log.debug({ err }, 'cannot count the apps for the maintenance job cost');
    }
  }

  #prune(): void {
    try {
      const result = pruneState(this.store, {
        now: this.#clock.now(),
        retentionMs: this.#runtime.config.state.retention,
      });
      this.#log.debug({ deleted: result.deleted, freedPages: result.freedPages }, 'old state pruned');
    } catch (err) {
      this.#log.error({ err }, 'cannot prune old state');
    }
  }

  /** Starts, moves or stops the health listener to match `server.listen`. */
  async #syncHealthServer(config: Config): Promise<void> {
    const listen = config.server.listen === null ? null : formatListen(config.server.listen);
    if (listen === this.#healthListen && (this.#healthServer !== undefined) === (listen !== null)) return;
    await this.#healthServer?.close();
    this.#healthServer = undefined;
    this.#healthListen = listen;
    if (listen === null) return;
    this.#healthServer = await startHealthServer({
      listen,
      metrics: this.metrics,
      logger: this.#log.child({ stage: 'health' }),
      source: { alive: () => this.#runtime.scheduler.running, readiness: () => this.#readiness() },
    });
  }

  /** Every enabled job completed a cycle within twice its interval, and the state file takes writes. */
  #readiness(): ReadinessCheck[] {
    const rt = this.#runtime;
    const now = this.#clock.now();
    const checks: ReadinessCheck[] = [];
    for (const job of rt.jobs.keys()) {
      const disabled = rt.deps.disabled.get(job);
      if (disabled !== undefined) {
        // A missing permission is alerted on; restarting the daemon would not fix it.
        checks.push({ check: `job:${job}`, ok: true, detail: `disabled: ${disabled}` });
        continue;
      }
      const allowed = 2 * (rt.scheduler.intervalMs(job) ?? 0);
      const last = this.#health.get(job)?.lastSuccessAt ?? null;
      if (last === null) {
        checks.push({ check: `job:${job}`, ok: false, detail: 'no complete cycle yet' });
      } else {
        const age = now - last;
        checks.push({
          check: `job:${job}`,
          ok: age <= allowed,
          detail: `last complete cycle ${Math.round(age / 1000)}s ago (allowed ${Math.round(allowed / 1000)}s)`,
        });
      }
    }
    try {
      this.store.transaction(() => this.store.setMeta('ready_probe_at', String(now)));
      checks.push({ check: 'state', ok: true, detail: 'state file takes writes' });
    } catch (err) {
      checks.push({ check: 'state', ok: false, detail: describeError(err) });
    }
    return checks;
  }
}

/** Jobs with a schedule and at least one enabled check, in run order, with their cron expression. */
function enabledJobs(config: Config, options: DetectorOptions): Map<SnapshotJob, string> {
  const out = new Map<SnapshotJob, string>();
  for (const job of JOB_NAMES) {
    const cron = config.jobs[job];
    if (cron === null) continue;
    if (!detectorsFor(job).some((d) => options[d.name] !== undefined)) continue;
    out.set(job, cron);
  }
  return out;
}

/** `server.listen` as the health listener takes it (HOST:PORT), whichever form the config gives. */
function formatListen(listen: string | { host: string; port: number }): string {
  if (typeof listen === 'string') return listen;
  return listen.host.includes(':') ? `[${listen.host}]:${listen.port}` : `${listen.host}:${listen.port}`;
}

/**
 * `promise`, or a rejection with the signal's reason as soon as `signal` aborts: a job's deadline
 * ends its wait for a result other jobs share, not the shared work itself.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
