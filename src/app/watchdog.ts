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
 *
 * Replicas (`run` on a PostgreSQL state, `state.url`): `start()` serves the console and the probes and
 * follows (`state/leader-election.ts`); elected, the process starts the work as a lone daemon does
 * (the jobs whose predecessor missed a slot at once, `job-slots.ts`); deposed, it stops it at once
 * (the cycle in flight writes nothing) and follows again. A reload keeps the role; a stop releases
 * the lease after the outbox is flushed, so the next replica takes over at its next try.
 */
import { performance } from 'node:perf_hooks';
import { AlertStore } from '../alerts/alert-store.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config, StateConfig } from '../config/load-config.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import type { Logger } from '../lib/logger.js';
import type { DeliveryReport, FlushReport } from '../notify/delivery.js';
import type { PassReport } from '../remediation/send-and-follow.js';
import type { ContextPass } from '../context/context-reader.js';
import type { ReadinessCheck } from '../server/readiness-check.js';
import { Metrics } from '../lib/metrics.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import { FencedError } from '../state/fenced-error.js';
import type { LeaderElection, LeaderTerm } from '../state/leader-election.js';
import { leaseHolderOf, takeLeaseNow } from '../state/leader-lease.js';
import { pruneState } from '../state/retention.js';
import { LeaseHeldError, openClaimed } from '../state/runner-lease.js';
import type { Store } from '../state/store.js';
import { openState, sameState } from '../state/open-state.js';
import type { Secret } from '../lib/secret.js';
import { cycleSignal } from './cycle-signal.js';
import { readCeilingMs } from './read-ceiling.js';
import { HealthListener } from './health-listener.js';
import { daemonFigures } from '../console/console-handler.js';
import { JobSlots } from './job-slots.js';
import { compareWithLeaderConfig, recordLeaderConfig } from './leader-config.js';
import { runJobCycle, showStoredGauges, type JobReport } from './job-cycle.js';
import { describeError } from '../api/describe-error.js';
import { errorText } from '../lib/error-text.js';
import { planRequestBudget } from './plan-request-budget.js';
import { readinessChecks } from './readiness.js';
import { runnerLeaseRenewal, type LeaseRenewal } from './runner-lease-renewal.js';
import { replicaElection, replicaSeam } from './replica-role.js';
import { closeRetiredAlerts, resolveSwitchedOffJobs } from './retired-by-config.js';
import {
  buildRuntime,
  closeRuntime,
  ESTATE_JOB,
  RETENTION_JOB,
  type Runtime,
  type RuntimeFoundation,
} from './runtime.js';
import { SourceHealthStore } from '../alerts/source-health-store.js';

/** The `lost` of a process that holds no state file lease. */
const NEVER_LOST = new AbortController().signal;

/** Options of {@link Watchdog.open}; what it hands on to every runtime as {@link RuntimeFoundation} says. */
export interface WatchdogOptions extends Pick<
  RuntimeFoundation,
  'dispatcher' | 'apiRetry' | 'schedule' | 'commandConfigFile'
> {
  config: Config;
  logger: Logger;
  /** Default the system clock; tests share a ManualClock with the simulator. */
  clock?: Clock;
  /** Default: a new registry with process metrics. */
  metrics?: Metrics;
  /**
   * Claim the state file for this command (`state/runner-lease.ts`): `run` and `check` do, so two
   * processes never deliver the same outbox. On a PostgreSQL state the leader lease is the claim
   * (`state/leader-election.ts`): `run` joins the election of its replicas; `check` takes the lease
   * at once or is refused (`LeaseHeldError`) while a replica leads. Absent (tests, in-process
   * tools): no claim.
   */
  lease?: 'run' | 'check';
}

/** What {@link Watchdog.runOnce} did. */
export type CycleReport = Awaited<ReturnType<Watchdog['runOnce']>>;

/** What {@link Watchdog.stop} did. */
export interface StopReport {
  /** The cycles in progress finished before the deadline (else they were aborted, writing nothing). */
  cyclesFinished: boolean;
  flush: FlushReport | undefined;
}

/** The running daemon (or, for `check`, the parts of it that run one cycle). */
export class Watchdog {
  readonly metrics: Metrics;
  readonly #alerts: AlertStore;
  readonly #health: SourceHealthStore;
  readonly #clock: Clock;
  readonly #log: Logger;
  /** A cycle's storage failure, said once per `log.repeat_every` and job: a full disk fails every cycle. */
  readonly #quiet: RepeatedLog;
  #runtime: Runtime;
  readonly #healthListener: HealthListener;
  readonly #inFlight = new Map<SnapshotJob, Promise<JobReport>>();
  /** Aborted when shutdown's deadline passes with a cycle still running. */
  readonly #hardStop = new AbortController();
  #started = false;
  /** The runtime whose switched-off checks' alerts were last closed (see {@link Watchdog.runOnce}). */
  #retiredClosedFor: Runtime | undefined;
  #stopping: Promise<StopReport> | undefined;
  /** The state file's lease, when this process holds one: released at the stop (see {@link lost}). */
  #lease: LeaseRenewal | undefined;
  /** Among replicas (`run` on PostgreSQL): the election, the jobs' last slots, and the term this process leads in. */
  #election: LeaderElection | undefined;
  #slots: JobSlots | undefined;
  #term: LeaderTerm | undefined;
  /** Terms starting and ending, and reloads, one at a time (see {@link #serial}). */
  #roleChange: Promise<void> = Promise.resolve();

  private constructor(
    private readonly options: WatchdogOptions,
    readonly store: Store,
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#log = options.logger;
    this.#quiet = new RepeatedLog(this.#log, { clock: this.#clock });
    this.metrics = options.metrics ?? new Metrics();
    this.#alerts = new AlertStore(store);
    this.#health = new SourceHealthStore(store);
    this.#healthListener = new HealthListener({
      metrics: this.metrics,
      logger: this.#log,
      source: {
        // From its start to its stop, whatever its role (a follower serves, and waits to lead) and
        // through a reload, whose old scheduler is stopped while its cycles in flight finish.
        alive: () => this.#started && !this.#stopping,
        readiness: () => this.#readiness(),
        role: () => this.#election?.status,
      },
      console: {
        store,
        clock: this.#clock,
        logger: this.#log,
        config: () => this.#runtime.config,
        jobs: () => this.#runtime.jobs,
        figures: () => daemonFigures(this.metrics, () => this.#readiness()),
        runtime: () => this.#runtime,
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
    const { state } = options.config;
    const replicas = state.url !== undefined && options.lease !== undefined;
    // The store's writes are fenced, and its waits limited, by the election once there is one (see `#join`).
    const seam = replicaSeam();
    const { store, lease } = openClaimed(replicas ? undefined : options.lease, (claim) =>
      openState(state, { logger: options.logger, clock: options.clock, ...claim, ...(replicas ? seam.options : {}) }),
    );
    try {
      const watchdog = new Watchdog(options, store);
      const onLost = (err: Error) => watchdog.interrupt(err.message);
      if (lease) watchdog.#lease = runnerLeaseRenewal(lease, watchdog.#log, watchdog.#clock, onLost);
      if (replicas) {
        seam.bind(watchdog.#join({ ...state, url: state.url }), () => watchdog.#healthListener.beat());
        if (options.lease === 'check') watchdog.#takeLeaseForCheck();
      }
      return watchdog;
    } catch (err) {
      lease?.release();
      store.close();
      throw err;
    }
  }

  /** The leader election this replica takes part in; its lease is released at `stop()`. */
  #join(state: StateConfig & { url: Secret }): LeaderElection {
    this.#slots = new JobSlots(this.store);
    this.#election = replicaElection({
      store: this.store,
      state,
      logger: this.#log,
      metrics: this.metrics,
      onElected: (term) => this.#lead(term),
      onDeposed: () => this.#follow(),
      onFollowing: (epoch) => compareWithLeaderConfig(this.store, this.#runtime.config, epoch, this.#log),
    });
    return this.#election;
  }

  /**
   * `check` on a PostgreSQL state: the leader lease, taken now or refused naming the replica that
   * leads (a check beside it would deliver its outbox twice); held, renewed and released at
   * `stop()` as a leader's, its writes fenced. Its term ends the check's cycles if it is lost.
   */
  #takeLeaseForCheck(): void {
    const election = this.#election!;
    const started = performance.now();
    const taken = takeLeaseNow(this.store.db, election.holder, this.#runtime.config.state.leader.lease);
    if ('held' in taken) throw new LeaseHeldError(leaseHolderOf(taken.held, Date.now()), 'check');
    this.#term = election.hold(taken.epoch, started);
    election.retire();
    election.start();
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
    // Alone, the work starts now; a replica serves, and the election starts the work when it leads (`#lead`).
    if (!this.#election) this.#takeUp(this.#runtime);
    await this.#healthListener.sync(this.#runtime.config.server);
    if (this.#election) this.#election.start();
    else this.#startRuntime(this.#runtime);
    this.#log.info({ jobs: Object.fromEntries(this.#runtime.jobs) }, 'deploy-watchdog started');
  }

  /**
   * Elected: the work starts as `start()` starts a lone daemon's, every write of it fenced by the
   * term. A FencedError (deposed meanwhile) or any other failure rejects, and the election steps down.
   */
  #lead(term: LeaderTerm): Promise<void> {
    return this.#serial(async () => {
      if (this.#stopping || term.signal.aborted) return;
      this.#term = term;
      this.#takeUp(this.#runtime);
      this.#startRuntime(this.#runtime, true);
    });
  }

  /**
   * Deposed (the term's signal has aborted the cycles in flight): the work stops at once, the
   * loops first (a send in flight is abandoned, its rows left due for the next leader), then the
   * cycles end, writing nothing; and this replica follows.
   */
  #follow(): Promise<void> {
    return this.#serial(async () => {
      this.#term = undefined;
      // Stopping: the stop ends the work itself, flush included.
      if (this.#stopping) return;
      const rt = this.#runtime;
      await Promise.all([rt.scheduler.stop(), rt.notifier.stop(), rt.remediation?.stop(0), rt.context?.stop(0)]);
      await Promise.all(this.#inFlight.values());
    });
  }

  /** True while this process does the work: always, alone (SQLite); among replicas, while it leads. */
  #leads(): boolean {
    if (!this.#election) return !this.#lease?.lost.aborted;
    return this.#term !== undefined && !this.#term.signal.aborted;
  }

  /**
   * Runs `fn` after every term start, term end and reload before it: a term starts only once the
   * last one's work has stopped, and a reload swaps runtimes between, never across, them.
   */
  #serial(fn: () => Promise<void>): Promise<void> {
    const run = this.#roleChange.then(fn);
    this.#roleChange = run.catch(() => undefined);
    return run;
  }

  /** Says what the token can read, as `start()` does, for `check` (which never starts); its failures are the cycles'. */
  async learnScope(): Promise<void> {
    await this.#runtime.learnScope().catch(() => undefined);
  }

  /**
   * One cycle of each named job (default: every enabled job), one job after another, then the
   * reports in job order. One at a time so that only one job's snapshot is alive at once: the
   * peak memory of `check` is the largest job's, not the sum of all six (see docs/benchmarks.md).
   * The requests of a job already run `api.concurrency` at a time, so the cycle takes little
   * longer. (The daemon's scheduled jobs stay independent: a slow job must not hold back the
   * others' alerts.) A job already running is not started twice: its cycle's report is returned.
   */
  async runOnce(jobs?: readonly SnapshotJob[]) {
    // `check` never starts the daemon: close here what the configuration stopped looking at.
    // Once per configuration: nothing of a check switched off can open again while it runs.
    if (!this.#started && this.#retiredClosedFor !== this.#runtime) {
      closeRetiredAlerts(this.store, this.#runtime.deps);
      this.#retiredClosedFor = this.#runtime;
    }
    const reports: JobReport[] = [];
    for (const job of jobs ?? this.jobs) reports.push(await this.#cycle(job));
    return {
      jobs: reports,
      /** Every job read its source completely (disabled jobs count as not complete). */
      complete: reports.every((r) => r.outcome === 'ok'),
      /** Some job failed because of the configuration (a namespace the token does not reach). */
      configProblem: reports.some((r) => r.configProblem === true),
      /** Alert events written, all jobs. */
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
   * and tests, where no loop runs (`ContextReader.readAll`). Undefined when `notify.context` is off.
   */
  async readContext(): Promise<ContextPass | undefined> {
    return this.#runtime.context?.readAll(this.#runtime.config.notify.context.wait, this.#hardStop.signal);
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
   * every disabled check enabled again. The state stays open: changes of where it is (`state.path`,
   * `state.url` and how it is reached) need a restart.
   */
  async reload(next: Config): Promise<void> {
    if (this.#stopping) return;
    let config = next;
    const running = this.#runtime.config.state;
    if (!sameState(next.state, running)) {
      this.#log.warn({ kept: this.store.path }, 'state.path or state.url changed: it takes effect at the next restart');
      config = { ...next, state: { ...running, retention: next.state.retention } };
    } else if (this.#election && next.state.leader.lease !== running.leader.lease) {
      this.#log.warn('state.leader.lease changed: it takes effect at the next restart');
      config = { ...next, state: { ...next.state, leader: running.leader } };
    }
    const fresh = this.#build(config);
    try {
      await this.#checkNamespaces(fresh);
    } catch (err) {
      await closeRuntime(fresh);
      throw err;
    }
    await this.#serial(async () => {
      const old = this.#runtime;
      await this.#halt(old);
      await closeRuntime(old);
      this.#runtime = fresh;
      this.#log.level = config.log.level;
      // The role is kept: a follower leaves the state to the leader, which reloads its own config.
      const leads = this.#leads();
      if (leads) {
        this.store.transaction(() => this.#health.enableAll());
        this.#letGoOfRetired(fresh);
      }
      if (this.#started) {
        await this.#healthListener.resync(config.server);
        if (leads) this.#startRuntime(fresh);
      }
    });
    this.#log.info({ jobs: Object.fromEntries(fresh.jobs) }, 'configuration reloaded');
  }

  /** Stops a runtime's work: no more ticks, the cycles in progress awaited, the loops ended at once (sends in flight abandoned, left due). */
  async #halt(rt: Runtime): Promise<void> {
    await rt.scheduler.stop();
    await Promise.all(this.#inFlight.values());
    await rt.notifier.stop();
    await rt.remediation?.stop(0);
    await rt.context?.stop(0);
  }

  /**
   * Aborted when another process took the state file over (this one stalled past its lease): its
   * cycles are cut, it sends nothing more, and `run` stops it. Among replicas terms end instead.
   */
  get lost(): AbortSignal {
    return this.#lease?.lost ?? NEVER_LOST;
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
    // A replica stopping takes no new term; one that leads keeps renewing its lease while it flushes.
    this.#election?.retire();
    const rt = this.#runtime;
    const [startedAt, deadline] = [this.#clock.now(), clockTimeout(this.#clock, deadlineMs, () => undefined)];
    const reached = new Promise((resolve) => deadline.signal.addEventListener('abort', resolve, { once: true }));
    let cyclesFinished = true;
    let flush: FlushReport | undefined;
    try {
      await rt.scheduler.stop();
      const cycles = Promise.all(this.#inFlight.values()).then(() => 'done' as const);
      if ((await Promise.race([cycles, reached])) !== 'done') {
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
      if (this.#leads()) flush = await this.#flush(rt, left());
      await rt.remediation?.stop(left());
    } finally {
      deadline.dispose();
      await this.#halt(rt); // every loop ends before the store closes, a failed flush (a store gone bad) or not
      await this.#healthListener.close();
      await closeRuntime(rt);
      try {
        // Fold the WAL back into the file so the database is one self-contained file at rest.
        this.store.db.checkpoint();
      } catch (err) {
        this.#log.warn({ err }, 'cannot checkpoint the state file before closing');
      }
      try {
        this.#lease?.release();
      } catch (err) {
        this.#log.warn({ err }, 'cannot release the lease on the state file; it expires by itself');
      }
      // Released only now, with the work stopped and the outbox flushed: the next leader starts from there.
      await this.#election?.close();
      this.metrics.leader.set(0);
      this.store.close();
      this.#log.info(
        { cyclesFinished, sent: flush?.sent ?? 0, waiting: flush?.waiting ?? 0, held: flush?.held ?? 0 },
        'deploy-watchdog stopped',
      );
    }
    return { cyclesFinished, flush };
  }

  /** Sends what is due within `deadlineMs` at a stop; deposed meanwhile, or the store failing, it leaves the rest in the outbox. */
  async #flush(rt: Runtime, deadlineMs: number): Promise<FlushReport | undefined> {
    try {
      return await rt.notifier.flush(deadlineMs);
    } catch (err) {
      if (!(err instanceof FencedError)) this.#log.error({ err }, 'cannot flush the outbox at the stop');
      return undefined;
    }
  }

  /**
   * One cycle of `job`, for the time of its schedule `slot` (wall clock; a cycle at once: now).
   * Among replicas it runs under the term (its end aborts the cycle) and records its slot.
   */
  #cycle(job: SnapshotJob, slot?: number): Promise<JobReport> {
    const running = this.#inFlight.get(job);
    if (running) return running;
    const rt = this.#runtime;
    const term = this.#term;
    const stop = cycleSignal({
      job,
      hardStop: term ? AbortSignal.any([this.#hardStop.signal, term.signal]) : this.#hardStop.signal,
      clock: this.#clock,
      concurrency: rt.config.api.concurrency,
      ceilingMs: readCeilingMs(rt.config.jobs),
    });
    const [slots, at] = [this.#slots, slot ?? Date.now()];
    const cycle = runJobCycle(rt.deps, job, stop.signal, slots && (() => slots.record(job, at)))
      .finally(stop.release)
      .catch((err: unknown): JobReport => {
        if (err instanceof FencedError) {
          // Deposed between the read and the write: nothing was committed; the next leader reads again.
          this.#log.info({ job, reason: err.reason }, 'cycle not written: this replica no longer leads');
          this.metrics.cycles.inc({ source: job, outcome: 'aborted' });
          return { job, outcome: 'aborted', reason: 'no longer the leader', findings: 0, events: 0 };
        }
        // A storage fault (disk full, locked): nothing was committed; the next cycle tries again.
        // Said as the delivery says it, without a stack: the message names the database and why.
        this.#quiet.error({ err: errorText(err, { named: true }), job }, 'cycle failed to write its result', job);
        this.metrics.cycles.inc({ source: job, outcome: 'failed' });
        return { job, outcome: 'failed', reason: describeError(err), findings: 0, events: 0 };
      })
      .finally(() => this.#inFlight.delete(job));
    this.#inFlight.set(job, cycle);
    return cycle;
  }

  /** Builds a runtime on what this watchdog holds (nothing started, nothing sent). */
  #build(config: Config): Runtime {
    return buildRuntime(config, {
      // What the options hand on as they are (`WatchdogOptions` picks them from `RuntimeFoundation`).
      ...this.options,
      store: this.store,
      alerts: this.#alerts,
      health: this.#health,
      clock: this.#clock,
      logger: this.#log,
      metrics: this.metrics,
      hardStop: this.#hardStop.signal,
      runScheduled: async (job, slot) => {
        if (job === RETENTION_JOB) this.#prune();
        else if (job === ESTATE_JOB) await planRequestBudget(this.#runtime, this.#hardStop.signal);
        else if (this.#slotRun(job, slot)) this.#log.debug({ job, slot }, 'slot already run by the leader before');
        else await this.#cycle(job as SnapshotJob, slot);
      },
    });
  }

  /** A cycle already covered this scheduled slot of `job`; a state that cannot be read says so in the cycle that runs. */
  #slotRun(job: string, slot: number): boolean {
    try {
      return this.#slots?.covered(job, slot) ?? false;
    } catch {
      return false;
    }
  }

  /** Starts a runtime's work; `takeover`: a new leader's, whose first cycles are only the jobs its predecessor left behind. */
  #startRuntime(rt: Runtime, takeover = false): void {
    if (this.#term) recordLeaderConfig(this.store, rt.config, this.#term.epoch, this.#log);
    rt.notifier.start();
    rt.interactions?.start();
    rt.context?.start();
    rt.remediation?.start();
    rt.scheduler.start();
    void this.#firstCycles(rt, takeover);
    // Through the scheduler: a count still running when its next tick comes is not started twice.
    void rt.scheduler.runNow(ESTATE_JOB);
  }

  /** The state readied for a runtime's work (alone, or a new term): sources on, old state pruned, retired alerts closed. */
  #takeUp(rt: Runtime): void {
    this.metrics.leader.set(1); // a replica's election says so too; a lone daemon leads from its start
    this.store.transaction(() => this.#health.enableAll());
    this.#prune();
    this.#letGoOfRetired(rt);
    showStoredGauges(rt.deps, rt.jobs.keys());
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
      schedule: rt,
      health: this.#health,
      store: this.store,
      now: this.#clock.now(),
      election: this.#election?.status,
    });
  }

  /**
   * A first cycle of every job at once (through the scheduler: a tick meanwhile is an overrun), so
   * alerts and readiness do not wait for the first tick; servers first (see `COLLECTORS`), so that a
   * bad server's alert is on record before its apps' alerts are delivered and inhibition can hold
   * them. At a takeover, only the jobs whose last slot is older than one interval (`job-slots.ts`).
   */
  async #firstCycles(rt: Runtime, takeover: boolean): Promise<void> {
    let jobs = [...rt.jobs.keys()];
    if (takeover && this.#slots) {
      const [slots, now] = [this.#slots, Date.now()];
      try {
        jobs = jobs.filter((job) => slots.dueAtTakeover(job, now, rt.scheduler.intervalMs(job) ?? 0));
      } catch (err) {
        // The state cannot be read now: the ticks run the jobs.
        this.#log.warn({ err }, "cannot read the jobs' last slots; they run at their next tick");
        return;
      }
      this.#log.info({ jobs }, 'taking over: the jobs whose last slot is older than one interval run now');
    }
    if (jobs.includes('servers')) await rt.scheduler.runNow('servers');
    if (this.#runtime !== rt || this.#stopping || !this.#leads()) return;
    for (const job of jobs) if (job !== 'servers') void rt.scheduler.runNow(job);
  }

  /** Fails early on a configured namespace the token does not reach; an unreachable API is left to the cycles. */
  async #checkNamespaces(rt: Runtime): Promise<void> {
    try {
      await rt.learnScope();
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
      // Deposed: the next leader prunes.
      if (err instanceof FencedError) return;
      this.#log.error({ err }, 'cannot prune old state');
    }
  }
}
