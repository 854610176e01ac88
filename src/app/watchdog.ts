/**
 * The daemon's lifecycle: one `Watchdog` owns one open state file for its whole life; everything
 * else (API client, channels, notifier, scheduler, remediation) is a runtime built from the config
 * (`runtime.ts`) and rebuilt on reload. What it is made of lives beside it: the cycle of one job
 * (`job-cycle.ts`) and its stop signal (`cycle-signal.ts`), readiness (`readiness.ts`), the health
 * listener (`health-listener.ts`), and what a new config stopped looking at (`retired-by-config.ts`).
 *
 *   start()     whoami, the health listener, the delivery loop, the context reader, the Slack app's
 *               buttons, the scheduler, a first cycle of every job
 *   runOnce()   one cycle of every enabled job (or the named ones), one after another, for `check` and tests
 *   reload()    a new runtime from a new config; the store and the health listener stay
 *   stop()      finish the cycle in progress within a deadline, leave a context read under way for the
 *               restart, flush the outbox, close the database
 */
import type { Dispatcher } from 'undici';
import { AlertStore } from '../alerts/alert-store.js';
import type { ApiClientOptions } from '../api/client.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { DeliveryReport, FlushReport } from '../notify/delivery.js';
import type { PassReport } from '../remediation/send-and-follow.js';
import type { ContextPass } from '../context/context-reader.js';
import type { ReadinessCheck } from '../server/health-server.js';
import { Metrics } from '../server/metrics.js';
import { pruneState } from '../state/retention.js';
import { claimLease, LEASE_TTL_MS, type RunnerLease } from '../state/runner-lease.js';
import { Store } from '../state/store.js';
import { cycleSignal } from './cycle-signal.js';
import { describeError } from '../api/describe-error.js';
import { HealthListener } from './health-listener.js';
import { runJobCycle, updateOpenAlerts, type JobReport } from './job-cycle.js';
import { warnMaintenanceCost } from './maintenance-cost.js';
import { readinessChecks } from './readiness.js';
import { closeRetiredAlerts, resolveSwitchedOffJobs } from './retired-by-config.js';
import { buildRuntime, closeRuntime, RETENTION_JOB, type Runtime } from './runtime.js';
import { SourceHealth } from '../alerts/source-health.js';

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
  readonly #healthListener: HealthListener;
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
    this.#healthListener = new HealthListener({
      metrics: this.metrics,
      logger: this.#log,
      source: { alive: () => this.#runtime.scheduler.running, readiness: () => this.#readiness() },
      console: {
        store,
        clock: this.#clock,
        logger: this.#log,
        metrics: this.metrics,
        config: () => this.#runtime.config,
        jobs: () => this.#runtime.jobs,
        readiness: () => this.#readiness(),
        wake: () => this.#runtime.notifier.wake(),
      },
      interactions: () => this.#runtime.interactions?.http,
    });
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
    return this.#healthListener.address;
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
    this.#letGoOfRetired(this.#runtime);
    updateOpenAlerts(this.#runtime.deps);
    await this.#healthListener.sync(this.#runtime.config.server);
    this.#startRuntime(this.#runtime);
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
    if (!this.#started && this.#retiredClosedFor !== this.#runtime) {
      closeRetiredAlerts(this.store, this.#runtime.deps);
      this.#retiredClosedFor = this.#runtime;
    }
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

  /**
   * Reads the context of the alerts that asked for it (their log, their restore point), for `check`
   * and tests, where no loop runs: passes of the reader until none reads anything more. Bounded by
   * `notify.context.wait` on the clock (what is not read by then stays pending, as in the daemon).
   * Undefined when `notify.context` is off.
   */
  async readContext(): Promise<ContextPass | undefined> {
    const reader = this.#runtime.context;
    if (!reader) return undefined;
    const wait = new AbortController();
    const timer = new AbortController();
    this.#clock.sleep(this.#runtime.config.notify.context.wait, timer.signal).then(
      () => wait.abort(new Error('notify.context.wait is over')),
      () => undefined,
    );
    const signal = AbortSignal.any([wait.signal, this.#hardStop.signal]);
    const total: ContextPass = { read: 0, dropped: 0, requests: 0 };
    try {
      for (;;) {
        const pass = await reader.readNow(signal);
        total.read += pass.read;
        total.dropped += pass.dropped;
        total.requests += pass.requests;
        if (pass.read + pass.dropped === 0 || signal.aborted) return total;
      }
    } finally {
      timer.abort();
    }
  }

  /**
   * One delivery round now (`check`, tests), after the alerts' context is read ({@link readContext}):
   * where the daemon's delivery waits for a new alert's context, one round reads it first.
   */
  async deliverDue(): Promise<DeliveryReport> {
    await this.readContext();
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
      await closeRuntime(fresh);
      throw err;
    }
    const old = this.#runtime;
    await old.scheduler.stop();
    await Promise.all(this.#inFlight.values());
    await old.notifier.stop();
    await old.remediation?.stop(0);
    await old.context?.stop(0);
    await closeRuntime(old);
    this.#runtime = fresh;
    this.#log.level = config.log.level;
    this.#health.enableAll();
    this.#letGoOfRetired(fresh);
    if (this.#started) {
      await this.#healthListener.sync(config.server);
      this.#startRuntime(fresh);
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
      // No more clicks taken; those being handled finish (they write the state).
      await rt.interactions?.stop();
      // A read under way is aborted, its ask left pending: it is read after the restart.
      await rt.context?.stop(0);
      flush = await rt.notifier.flush(left());
      await rt.remediation?.stop(left());
    } finally {
      cancel.abort();
      await this.#healthListener.close();
      await closeRuntime(rt);
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
    const rt = this.#runtime;
    const stop = cycleSignal({
      job,
      hardStop: this.#hardStop.signal,
      clock: this.#clock,
      concurrency: rt.config.api.concurrency,
      deadlineMs: rt.config.jobs.deadline === 'auto' ? rt.scheduler.intervalMs(job) : rt.config.jobs.deadline,
    });
    const cycle = runJobCycle(rt.deps, job, stop.signal)
      .finally(stop.release)
      .catch((err: unknown): JobReport => {
        // A storage fault (disk full, locked): nothing was committed; the next cycle tries again.
        this.#log.error({ err, job }, 'cycle failed to write its result');
        this.metrics.cycles.inc({ source: job, outcome: 'failed' });
        return { job, outcome: 'failed', reason: describeError(err), findings: 0, events: 0, durationMs: 0 };
      })
      .finally(() => this.#inFlight.delete(job));
    this.#inFlight.set(job, cycle);
    return cycle;
  }

  /** Builds a runtime on what this watchdog holds (nothing started, nothing sent). */
  #build(config: Config): Runtime {
    return buildRuntime(config, {
      store: this.store,
      alerts: this.#alerts,
      health: this.#health,
      clock: this.#clock,
      logger: this.#log,
      metrics: this.metrics,
      hardStop: this.#hardStop.signal,
      dispatcher: this.#options.dispatcher,
      apiRetry: this.#options.apiRetry,
      commandConfigFile: this.#options.commandConfigFile,
      runScheduled: async (job) => {
        if (job === RETENTION_JOB) this.#prune();
        else await this.#cycle(job as SnapshotJob);
      },
    });
  }

  #startRuntime(rt: Runtime): void {
    rt.notifier.start();
    rt.interactions?.start();
    rt.context?.start();
    rt.remediation?.start();
    rt.scheduler.start();
    void this.#firstCycles(rt);
    void warnMaintenanceCost(rt, this.#hardStop.signal);
  }

  /** What a new configuration stopped looking at: source alerts of jobs off resolve, retired checks' alerts close. */
  #letGoOfRetired(rt: Runtime): void {
    resolveSwitchedOffJobs(this.store, rt.deps, rt.jobs);
    closeRetiredAlerts(this.store, rt.deps);
    this.#retiredClosedFor = rt;
  }

  /** What `/readyz` answers (see `readiness.ts`). */
  #readiness(): ReadinessCheck[] {
    const rt = this.#runtime;
    return readinessChecks({
      jobs: rt.jobs.keys(),
      disabled: rt.deps.disabled,
      intervalMs: (job) => rt.scheduler.intervalMs(job),
      health: this.#health,
      store: this.store,
      now: this.#clock.now(),
    });
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
}
