/**
 * The parts of the daemon built from one configuration: the API client, the channels, the
 * notifier, remediation, the Slack app's buttons, the scheduler, and what a job cycle needs (`CycleDeps`). Built whole or
 * not at all, started by the watchdog, and rebuilt from scratch on reload; the state file, the
 * alert store and the health listener outlive it.
 */
import { sayTokenVisibility } from './say-token-visibility.js';
import type { Dispatcher } from 'undici';
import type { AlertStore } from '../alerts/alert-store.js';
import { createApiClient, type ApiClient, type ApiClientOptions, type ApiObserver } from '../api/client.js';
import { countedErrorCode, countedStatus } from '../api/errors.js';
import { secretsIn } from '../config/secret.js';
import { JOB_NAMES } from '../collectors/collectors.js';
import { resolveNamespaces, type NamespaceScope } from '../collectors/resolve-namespaces.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import {
  detectorOptionsFromConfig,
  detectorsFor,
  stateListsFromConfig,
  type DetectorOptions,
} from '../detectors/registry.js';
import type { Clock } from '../lib/clock.js';
import { COMPONENT, type Logger } from '../lib/logger.js';
import { raceAbort } from '../lib/race-abort.js';
import { buildChannels, closeChannels } from '../notify/build-channels.js';
import { messageLinks } from '../notify/message-links.js';
import type { Channel } from '../notify/channels/channel.js';
import { createNotifier } from '../notify/notifier.js';
import { createSlackInteractions, type SlackInteractions } from '../interactions/slack-interactions.js';
import { createRemediation } from '../remediation/create-remediation.js';
import { remediationDigest } from '../remediation/remediation-digest.js';
import { ContextReader } from '../context/context-reader.js';
import { RunsMemory } from '../collectors/runs-memory.js';
import { SharedApps } from '../collectors/shared-apps.js';
import { alertContextSource } from '../context/context-source.js';
import { ContextStage } from '../context/context-stage.js';
import { ContextStore } from '../context/context-store.js';
import type { Remediator } from '../remediation/remediator.js';
import { buildLabels } from '../detectors/build-labels.js';
import { runContext } from '../detectors/run-context.js';
import type { RunListItem } from '../api/schemas.js';
import type { Metrics } from '../lib/metrics.js';
import type { Store } from '../state/store.js';
import type { CycleDeps } from './job-cycle.js';
import { JobOverruns, OVERRUNS_COMPONENT } from './job-overruns.js';
import { readsPerApp } from './maintenance-cost.js';
import { RequestBudget } from './request-budget.js';
import { Scheduler, type ScheduleFn } from './scheduler.js';
import type { SourceHealthStore } from '../alerts/source-health-store.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import { WarnedOnce } from './warned-once.js';

/**
 * The parts built from one configuration, as {@link buildRuntime} builds them (its type is that of
 * what it returns: each part is said once, there).
 */
export type Runtime = ReturnType<typeof buildRuntime>;

/** What outlives a runtime and every runtime is built on. */
export interface RuntimeFoundation {
  store: Store;
  alerts: AlertStore;
  health: SourceHealthStore;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Aborted when the daemon stops for good: ends the shared whoami. */
  hardStop: AbortSignal;
  /** undici dispatcher for the API client; by default the client owns a keep-alive Agent. */
  dispatcher?: Dispatcher | undefined;
  /** Backoff tunables of the API client (its delays run on the clock). */
  apiRetry?: ApiClientOptions['retry'] | undefined;
  /** The scheduler's tick source; default node-cron (tests give ticks by hand). */
  schedule?: ScheduleFn | undefined;
  /** The `--config` the commands in messages must give (`ChannelDeps.commandConfigFile`); absent: none. */
  commandConfigFile?: string | undefined;
  /** What the scheduler runs at each tick of a job (a job cycle, or retention), for the time of its schedule `slot`. */
  runScheduled: (job: string, slot: number) => Promise<void>;
}

/** The scheduler's name for the daily retention run, beside the jobs. */
export const RETENTION_JOB = 'retention';
/** Retention runs once a day at a quiet minute (and once at start). */
const RETENTION_CRON = '17 3 * * *';

/** The scheduler's name for counting the estate for the request budget (`plan-request-budget.ts`). */
export const ESTATE_JOB = 'estate';
/** Its ticks: each counts the estate when the budget is due a count (`RequestBudget.countDue`). */
const ESTATE_CRON = '*/5 * * * *';

/** How long a failed whoami stands for every job before it is asked again. */
const NAMESPACES_RETRY_MS = 30_000;

/** Builds a runtime (nothing started, nothing sent); on failure closes what it opened and throws. */
export function buildRuntime(config: Config, base: RuntimeFoundation) {
  const { clock, logger, metrics } = base;
  // Its settings need the scheduler (built last): it reads them when the estate is counted.
  let budget: RequestBudget | undefined;
  const client = createApiClient({
    baseUrl: config.api.base_url,
    token: config.api.token,
    otherSecrets: secretsIn(config).filter((s) => s !== config.api.token),
    requestsPerSecond: config.api.requests_per_second,
    timeoutMs: config.api.timeout,
    maxRetries: config.api.max_retries,
    pageSize: config.api.page_size,
    maxAnswerBytes: config.api.max_answer_size,
    maxAnswerValues: config.api.max_answer_values,
    maxListItems: config.api.max_list_items,
    extraValues: config.api.extra_values,
    zonelessTimestamps: config.api.zoneless_timestamps,
    // A walk with a page ahead is two requests in flight: within what api.concurrency allows.
    readAhead: config.api.concurrency > 1,
    clock,
    logger: logger.child({ stage: 'api' }),
    observer: apiObserver(metrics, () => budget?.throttled()),
    ...(base.dispatcher ? { dispatcher: base.dispatcher } : {}),
    ...(base.apiRetry ? { retry: base.apiRetry } : {}),
  });
  let channels: Map<string, Channel> | undefined;
  // Built after the channels (it needs the notifier): a living message asks it through this.
  let remediation: Remediator | undefined;
  let interactions: SlackInteractions | undefined;
  try {
    channels = buildChannels(config.notify.channels, {
      logger: logger.child({ stage: 'channel' }),
      clock,
      commandConfigFile: base.commandConfigFile,
      links: messageLinks(config),
      consoleUrl: config.server.console.public_url,
      remedyOf: (fingerprint) => remediation?.offer(fingerprint),
      store: base.store,
      maxItemsPerMessage: config.notify.max_items_per_message,
    });
    const contextStore = new ContextStore(base.store);
    const contextOn = config.notify.context.enabled;
    const notifier = createNotifier({
      store: base.store,
      notify: config.notify,
      alerts: config.alerts,
      channels,
      clock,
      logger,
      metrics,
      // A context asked before this runtime (a restart, a reload) gets its full wait from now.
      ...(contextOn ? { context: alertContextSource(contextStore, config.notify.context.wait, clock.now()) } : {}),
      // From the audit, configured or not now: what an earlier configuration did still happened.
      remediationSince: (since) => remediationDigest(base.store, since),
      // Among replicas, two leases for a deposed leader's record of what it sent (issue 24); alone, none.
      claimGraceMs: config.state.url ? 2 * config.state.leader.lease : 0,
    });
    // Kept between cycles, lost with the runtime (a reload or restart: one full read of the runs).
    const runsMemory = new RunsMemory();
    const context = contextOn
      ? new ContextReader({
          store: contextStore,
          alerts: base.alerts,
          client,
          settings: config.notify.context,
          token: config.api.token,
          clock,
          logger,
          onRead: () => notifier.wake(),
          onRunDetail: (run) => runsMemory.remember(run),
          knowsRunDetail: (id) => runsMemory.details.has(id),
        })
      : undefined;
    const detectorOptions = detectorOptionsFromConfig(config.checks);
    const jobs = enabledJobs(config, detectorOptions);
    remediation = createRemediation({ config, client, store: base.store, notifier, clock, logger, metrics });
    interactions = createSlackInteractions({
      configs: config.notify.channels,
      channels,
      store: base.store,
      remediation,
      wake: () => notifier.wake(),
      clock,
      logger,
      commandConfigFile: base.commandConfigFile,
    });
    const deps: CycleDeps = {
      config,
      client,
      alerts: base.alerts,
      health: base.health,
      notifier,
      metrics,
      clock,
      logger,
      detectorOptions,
      lifecycle: {
        forCycles: config.alerts.for,
        // The notify router drops the repeats a route does not want yet; the lifecycle must repeat
        // at least as often as the most eager route.
        repeatIntervalMs: Math.min(config.alerts.repeat_interval, notifier.lifecycleRepeatIntervalMs),
        resolveGuard: config.alerts.resolve_guard,
      },
      namespaces: sharedNamespaces(client, config, clock, base.hardStop),
      disabled: new Map(),
      failedReads: new RepeatedLog(logger, { clock }),
      // The context stage first: the outbox decides in the same transaction whether a message waits for it.
      stages: [
        ...(context ? [new ContextStage(contextStore, context, logger.child({ stage: 'context' }))] : []),
        notifier,
        ...(remediation ? [remediation] : []),
      ],
      stateLists: stateListsFromConfig(config.checks),
      warnedStateWords: new WarnedOnce(),
      vanishedTold: new Set(),
      memory: { runsMemory, sharedApps: new SharedApps(), ...detailWantedOf(remediation) },
    };
    const scheduler = new Scheduler({
      jobs: [
        ...[...jobs].map(([name, cron]) => ({ name, cron })),
        { name: RETENTION_JOB, cron: RETENTION_CRON },
        { name: ESTATE_JOB, cron: ESTATE_CRON },
      ],
      jitterMs: config.jobs.jitter,
      // A job the budget stretched skips the ticks it does not run (never the runs job).
      run: (job, slot) => (budget!.admits(job, slot) ? base.runScheduled(job, slot) : Promise.resolve()),
      logger,
      overruns: new JobOverruns({ clock, logger: logger.child({ [COMPONENT]: OVERRUNS_COMPONENT }), metrics }),
      ...(base.schedule ? { schedule: base.schedule } : {}),
    });
    const learnScope = async () => {
      const scope = await deps.namespaces();
      await sayTokenVisibility(client, base.store, clock, logger.child({ stage: 'visibility' }), base.hardStop);
      return scope;
    };
    budget = requestBudget(config, detectorOptions, jobs, scheduler, clock, metrics);
    return {
      config,
      client,
      channels,
      notifier,
      scheduler,
      remediation,
      /** The Slack app's buttons: their receivers and what they do; undefined when no channel takes clicks. */
      interactions,
      /** Reads new alerts' context after their cycle (`notify.context`); undefined when it is off. */
      context,
      deps,
      /** Enabled jobs with their cron expression. */
      jobs,
      /**
       * At start and on reload: the namespaces to read (as `deps.namespaces`), after learning and
       * saying once what the token can read (`say-token-visibility.ts`, never fatal).
       */
      learnScope,
      /** The request budget: each job's requests an hour fitted under the rate limit (`request-budget.ts`). */
      budget,
    };
  } catch (err) {
    void client.close();
    // Its Socket Mode connections are reserved as it is built: let go, or a stop would keep them.
    void interactions?.stop();
    if (channels) void closeChannels(channels.values());
    throw err;
  }
}

/**
 * Closes what a runtime holds open: the Slack interactions' connections (after the clicks being
 * handled), the API client's connections and the channels.
 */
export async function closeRuntime(rt: Runtime): Promise<void> {
  await rt.interactions?.stop().catch(() => undefined);
  await rt.client.close().catch(() => undefined);
  await closeChannels(rt.channels.values());
}

/** Jobs with a schedule and at least one enabled check, in run order, with their cron expression. */
export function enabledJobs(config: Config, options: DetectorOptions): Map<SnapshotJob, string> {
  return new Map(
    JOB_NAMES.flatMap((job) => {
      const cron = config.jobs[job];
      return cron !== null && detectorsFor(job).some((d) => options[d.name] !== undefined) ? [[job, cron]] : [];
    }),
  );
}

/** The request budget of the enabled jobs on their schedules; its plan goes to the metrics as it changes. */
function requestBudget(
  config: Config,
  detectorOptions: DetectorOptions,
  jobs: ReadonlyMap<SnapshotJob, string>,
  scheduler: Scheduler,
  clock: Clock,
  metrics: Metrics,
): RequestBudget {
  const settings = {
    pageSize: config.api.page_size,
    // Every enabled job is on the scheduler.
    intervals: new Map([...jobs.keys()].map((job) => [job, scheduler.intervalMs(job)!])),
    runStateLists: config.checks.failed_runs.failed_states.length + config.checks.stuck_runs.active_states.length,
    readsPerApp: readsPerApp(detectorOptions),
  };
  return new RequestBudget(
    settings,
    config.api.requests_per_second,
    () => clock.now(),
    (plan) => {
      metrics.requestBudgetRatio.set(plan.ratio);
      metrics.jobStretch.reset();
      for (const line of plan.jobs)
        if (line.job !== 'apps.list') metrics.jobStretch.set({ source: line.job }, line.stretch);
    },
  );
}

/** Every API call counted and timed in the metrics, by function; a 429 lowers the request budget (`throttled`). */
function apiObserver(metrics: Metrics, throttled: () => void): ApiObserver {
  return (a) => {
    if (a.status === 429) throttled();
    // Given up by the daemon itself (a page read ahead it no longer needs, a stop): no error of the API's.
    if (a.errorCode === 'aborted') return metrics.apiRequests.inc({ function: a.fn, status: 'aborted' });
    metrics.apiRequests.inc({ function: a.fn, status: countedStatus(a.status) });
    metrics.apiLatency.observe({ function: a.fn }, a.durationMs / 1000);
    if (a.errorCode !== undefined) metrics.apiErrors.inc({ function: a.fn, code: countedErrorCode(a.errorCode) });
  };
}

/**
 * One whoami for every job of a runtime. A failed one is kept for a while: with the API down, six
 * jobs each waiting out whoami's retries would make `check` take six times as long. The shared
 * question ends only with the daemon (`hardStop`); `signal` ends one job's wait for the answer.
 */
function sharedNamespaces(
  client: ApiClient,
  config: Config,
  clock: Clock,
  hardStop: AbortSignal,
): (signal?: AbortSignal) => Promise<NamespaceScope> {
  let scope: Promise<NamespaceScope> | undefined;
  let askAgainAt = 0;
  return (signal) => {
    if (scope === undefined || (askAgainAt > 0 && clock.now() >= askAgainAt)) {
      askAgainAt = 0;
      scope = resolveNamespaces(client, config.api.namespaces, hardStop);
      scope.catch(() => (askAgainAt = clock.now() + NAMESPACES_RETRY_MS));
    }
    // A job's deadline ends its wait for the answer every job shares, not the shared question.
    return raceAbort(scope, signal, (reason) => {
      throw reason;
    });
  };
}

/**
 * The runs collector's test of the failed runs a remediation policy waits on for their detail, by
 * the labels their alert will have from the list item alone (the app's own labels come later).
 */
function detailWantedOf(remediation: Remediator | undefined): { detailWanted?: (run: RunListItem) => boolean } {
  const wanted = remediation?.runDetailWanted;
  if (!wanted) return {};
  const noApps = new Map();
  return { detailWanted: (run) => wanted(buildLabels('failed_runs', runContext(run, noApps).labels)) };
}
