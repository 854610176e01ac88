/**
 * One cycle of one job: collect → detect → `commitFindings` (one transaction: source health, the
 * lifecycle, then its stages, the outbox and remediation) → metrics and logs. A failed read writes only the source-health change: an
 * incomplete snapshot never resolves, repeats or opens anything.
 */
import { performance } from 'node:perf_hooks';
import type { AlertEvent } from '../alerts/alert-event.js';
import type { AlertRow, AlertStore } from '../alerts/alert-store.js';
import { commitFindings, type CycleStage, type FindingsPart } from '../alerts/commit-findings.js';
import { recordsJobKey, sourceJobKey, type JobKey } from '../alerts/job-key.js';
import { Quarantine, type QuarantinedRecord } from '../api/quarantine.js';
import { heldSubjectsOf, skippedRecordsFindings } from '../alerts/skipped-records.js';
import { reportSkippedRecords } from './skipped-records-report.js';
import type { ApplyOptions, ResolveGuardReport } from '../alerts/lifecycle.js';
import type { ApiClient } from '../api/client.js';
import type { CollectorContext } from '../collectors/collector-context.js';
import { COLLECTORS } from '../collectors/collectors.js';
import { NamespaceError, type NamespaceScope } from '../collectors/resolve-namespaces.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Config } from '../config/load-config.js';
import type { FoldedFinding } from '../detectors/detector-result.js';
import type { Finding } from '../detectors/finding.js';
import type { StateRecord, StateWordTally } from '../collectors/state-word-tally.js';
import {
  explainerFor,
  extraReadsFor,
  relevanceFor,
  reportingChecks,
  runDetectors,
  type DetectorOptions,
  type NamedStateList,
} from '../detectors/registry.js';
import type { Clock } from '../lib/clock.js';
import { subjectKey } from '../lib/alert-vocabulary.js';
import type { Notifier } from '../notify/notifier.js';
import type { Metrics } from '../lib/metrics.js';
import { describeError, permissionDenial } from '../api/describe-error.js';
import type { Logger } from '../lib/logger.js';
import { unknownStateWords, unknownStateWordWarning, type UnknownStateWord } from './unknown-state-words.js';
import { cannotReadFinding, checkDisabledFinding } from '../alerts/source-health.js';
import type { SourceHealthStore } from '../alerts/source-health-store.js';
import { FencedError } from '../state/fenced-error.js';
import { ReadSoFar } from '../collectors/read-so-far.js';
import { boundThatCut, partialFindings, type PartialFindings } from './partial-cycle.js';
import { explainVanished, type VanishedResolutions } from './vanished-resolutions.js';
import { cutCommitWarning } from './long-commit.js';
import type { RepeatedLog } from '../lib/repeated-log.js';
import type { WarnedOnce } from './warned-once.js';

/**
 * The most alert events a cycle logs one line each; the rest are counted in one line. A storm of
 * 10,000 (a backup outage across an estate) was 10,000 lines, 2.3 MB, written while the cycle waits.
 */
const LOGGED_EVENTS_MAX = 100;

/** How a cycle ended. */
export type JobOutcome =
  /** A complete snapshot was read and applied. */
  | 'ok'
  /** The source could not be read completely; nothing but source health was written. */
  | 'failed'
  /** A hard bound cut the read (`partial-cycle.ts`): what it read fired alerts, nothing resolved. */
  | 'partial'
  /** The token lacks a permission the job needs; the job is off until restart or reload. */
  | 'disabled'
  /** Shutdown cut the cycle short; nothing was written. */
  | 'aborted';

/** What one cycle did, for `check`, logs and tests. */
export interface JobReport {
  job: SnapshotJob;
  outcome: JobOutcome;
  /** Why it did not complete. */
  reason?: string;
  /** True when the reason is the configuration (a namespace the token does not reach). */
  configProblem?: boolean;
  /** Findings of the snapshot (0 unless ok or partial). */
  findings: number;
  /** Alert events written (firing, repeat, escalated, resolved), source alerts included. */
  events: number;
  /** State words the read met that no `checks.*` list names (see `unknown-state-words.ts`). */
  unknownStates?: UnknownStateWord[];
  /** Records the read set aside (`api/quarantine.ts`); their alerts were held. Absent: none. */
  skipped?: QuarantinedRecord[];
}

/** Everything one cycle needs, built once per running configuration. */
export interface CycleDeps {
  config: Config;
  client: ApiClient;
  alerts: AlertStore;
  health: SourceHealthStore;
  notifier: Notifier;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
  detectorOptions: DetectorOptions;
  /** The lifecycle's rules (`alerts.*`), the resolve guard included. */
  lifecycle: Pick<ApplyOptions, 'forCycles' | 'repeatIntervalMs' | 'resolveGuard'>;
  /** The namespaces to read (one whoami for every job); `signal` ends this job's wait for it. */
  namespaces: (signal?: AbortSignal) => Promise<NamespaceScope>;
  /** Jobs switched off for lack of a permission, with the reason. */
  disabled: Map<string, string>;
  /** A failed read, said once per `log.repeat_every` and job: a source down for days writes a line a period, not one a cycle. */
  failedReads: RepeatedLog;
  /** What takes a cycle's events in its transaction, in order: the outbox, then remediation. */
  stages: readonly CycleStage[];
  /** The config's lists of state words, by the kind of record they judge. */
  stateLists: ReadonlyMap<StateRecord, readonly NamedStateList[]>;
  /** The unknown state words (and values beyond the stated ones) already warned about under this configuration. */
  warnedStateWords: WarnedOnce;
  /** The production apps already told vanished under this configuration (`namespace/name`). */
  vanishedTold: Set<string>;
  /**
   * What the runs collector keeps between cycles, the `apps.list` the jobs share (`collectors/`),
   * and the failed runs whose detail a remediation policy waits on.
   */
  memory?: Pick<CollectorContext, 'runsMemory' | 'sharedApps' | 'detailWanted'>;
}

/** Source alerts need no `for` damping of their own: the failure threshold already is one. */
const SOURCE_FOR_CYCLES = 1;

/**
 * Runs one cycle of `job`; never throws for a source failure (it reports it). `record` is written
 * in the cycle's transaction, whatever the cycle commits (the job's slot, `job-slots.ts`); a cycle
 * that commits nothing (aborted) records nothing.
 */
export async function runJobCycle(
  deps: CycleDeps,
  job: SnapshotJob,
  signal?: AbortSignal,
  record?: () => void,
): Promise<JobReport> {
  const { clock, metrics } = deps;
  const log = deps.logger.child({ job });
  // The lifecycle of the job's source alert: a failed read opens it, a complete one resolves it.
  const sourceLifecycle = { ...deps.lifecycle, forCycles: SOURCE_FOR_CYCLES, logger: log };
  const started = performance.now();
  const now = clock.now();
  const report = (outcome: JobOutcome, extra: Partial<JobReport> = {}): JobReport => {
    const durationMs = Math.round(performance.now() - started);
    metrics.cycles.inc({ source: job, outcome });
    if (outcome !== 'disabled') metrics.cycleDuration.observe({ source: job }, durationMs / 1000);
    return { job, outcome, findings: 0, events: 0, ...extra };
  };
  // One transaction under `key`: the cycle's record (when it has one), then what `write` writes and
  // the parts for the lifecycle it returns.
  const commit = (key: JobKey, write: () => readonly FindingsPart[]): AlertEvent[] =>
    commitFindings(
      deps.alerts,
      {
        job: key,
        now,
        write: () => {
          record?.();
          return write();
        },
      },
      deps.stages,
    );

  /**
   * A read failed: count it, disable the job on a missing permission, alert past the threshold. A
   * read cut by a hard bound applies what it read (`partial`) in the same transaction: it may fire,
   * never resolve (no resolve guard either: it says nothing about what resolves).
   */
  const readFailed = (err: unknown, partial?: PartialFindings): JobReport => {
    const reason = describeError(err);
    const denial = permissionDenial(err);
    const key = sourceJobKey(job);
    if (denial) {
      const disabled = `the token lacks ${denial.permission} (${denial.fn} answered ${denial.code})`;
      deps.disabled.set(job, disabled);
      const events = commit(key, () => {
        deps.health.disable(job, disabled, now);
        return [{ job: key, findings: [checkDisabledFinding(job, denial)], options: sourceLifecycle }];
      });
      updateOpenAlerts(deps);
      log.error(
        { permission: denial.permission, fn: denial.fn, code: denial.code },
        `${job} check disabled until restart or reload: the token lacks ${denial.permission}`,
      );
      return report('disabled', { reason: disabled, events: events.length });
    }

    const threshold = deps.config.checks.sources.failure_threshold;
    const events = commit(key, () => {
      const row = deps.health.recordFailure(job, reason, now);
      const { resolveGuard: _, ...lifecycle } = deps.lifecycle;
      const read = partial ? [{ job, ...partial, options: { ...lifecycle, logger: log } }] : [];
      // Below the threshold a failure is only counted: no source alert (a cut read's findings still go).
      return row.consecutiveFailures < threshold
        ? read
        : [...read, { job: key, findings: [cannotReadFinding(job, row)], options: sourceLifecycle }];
    });
    if (events.length > 0) updateOpenAlerts(deps);
    if (partial)
      log.warn(
        { err, findings: partial.findings.length },
        `read of ${job} cut short: what it read may fire, nothing resolves`,
      );
    else deps.failedReads.warn({ job, err }, `cannot read ${job}`, job);
    logEvents(log, events);
    return report(partial ? 'partial' : 'failed', {
      reason,
      findings: partial?.findings.length ?? 0,
      events: events.length,
      ...(err instanceof NamespaceError ? { configProblem: true } : {}),
    });
  };

  const disabledReason = deps.disabled.get(job);
  if (disabledReason !== undefined) return report('disabled', { reason: disabledReason });

  let findings: Finding[];
  let incomplete: string[];
  let stateWords: StateWordTally[] = [];
  let explain: ((alert: AlertRow) => string | null) | undefined;
  let folded: FoldedFinding[] | undefined;
  // The records the read sets aside: their alerts are held, the rest of the read stays complete.
  const quarantine = new Quarantine();
  const soFar = new ReadSoFar();
  let vanished: VanishedResolutions | undefined;
  try {
    const scope = await deps.namespaces(signal);
    const openSubjects = deps.alerts.openSubjectsByJob(job);
    const ctx: CollectorContext = {
      client: deps.client,
      // The namespaces to read, and those whoami said the token reaches.
      ...scope,
      checks: deps.config.checks,
      now,
      signal,
      concurrency: deps.config.api.concurrency,
      detailsBy: () => clock.now() + deps.config.api.timeout,
      openSubjects,
      reportedElsewhere: () => deps.alerts.openSubjectsOutside(job),
      reporting: reportingChecks(deps.detectorOptions, (j) => deps.config.jobs[j] !== null && !deps.disabled.has(j)),
      // The detectors below judge by the same `now`, so what is kept is what they could report,
      // and the records open alerts are about, so a resolved one can say why it is over.
      relevance: relevanceFor(
        deps.detectorOptions,
        now,
        new Set(openSubjects.map(({ subject }) => subjectKey(subject))),
      ),
      extraReads: extraReadsFor(deps.detectorOptions),
      quarantine,
      soFar,
      logger: log,
      ...deps.memory,
    };
    const snapshot = await COLLECTORS[job](ctx);
    ({ findings, incomplete, folded } = runDetectors(snapshot, deps.detectorOptions, now));
    stateWords = snapshot.stateWords ?? [];
    vanished = await explainVanished(
      deps,
      job,
      { findings, incomplete, folded },
      explainerFor(snapshot, deps.detectorOptions),
      log,
      signal,
    );
    explain = vanished.explain;
  } catch (err) {
    const cut = boundThatCut(err, signal);
    if (cut) {
      const partial = partialFindings(soFar, job, cut, deps.detectorOptions, now);
      const held = heldSubjectsOf(quarantine.records());
      return readFailed(cut, partial && { ...partial, held });
    }
    if (signal?.reason instanceof FencedError) {
      log.info({ reason: signal.reason.reason }, 'cycle cut short: this replica no longer leads; nothing written');
      return report('aborted', { reason: 'no longer the leader' });
    }
    if (signal?.aborted) {
      log.info('cycle cut short by shutdown; nothing written');
      return report('aborted', { reason: 'shutdown' });
    }
    return readFailed(err);
  }

  const skipped = quarantine.records();
  const committing = performance.now();
  let events: AlertEvent[];
  try {
    events = commit(job, () => {
      deps.health.recordSuccess(job, now);
      return [
        {
          job,
          findings,
          incomplete,
          explain,
          held: new Map([...(vanished?.held ?? []), ...heldSubjectsOf(skipped)]),
          ...(folded ? { folded } : {}),
          options: { ...deps.lifecycle, logger: log, onResolveGuard: (r) => reportResolveGuard(deps, log, r) },
        },
        // A complete read resolves this job's "cannot read" or "disabled" alert, if one is open.
        { job: sourceJobKey(job), findings: [], options: sourceLifecycle },
        // The records set aside, said once per reason; over when a complete read sets none aside.
        {
          job: recordsJobKey(job),
          findings: skippedRecordsFindings(job, skipped),
          options: { ...deps.lifecycle, logger: log },
        },
      ];
    });
  } catch (err) {
    const ms = performance.now() - committing;
    const warning = err instanceof FencedError ? cutCommitWarning(ms, deps.config.state) : undefined;
    if (warning) log.warn({ ms: Math.round(ms) }, warning);
    throw err;
  }
  const commitMs = Math.round(performance.now() - committing);
  vanished?.tell(now);
  metrics.lastSuccess.set({ source: job }, now / 1000);
  updateOpenAlerts(deps);
  deps.notifier.heartbeat();
  logEvents(log, events);
  for (const f of folded ?? [])
    log.debug({ fingerprint: f.fingerprint, reason: f.reason }, 'folded into another alert');
  const unknownStates = stateWords.flatMap((tally) => warnUnknownStateWords(deps, log, tally));
  reportSkippedRecords({ metrics, warned: deps.warnedStateWords }, job, log, skipped);
  log.info({ findings: findings.length, events: events.length, skipped: skipped.length, commitMs }, 'cycle complete');
  return report('ok', {
    findings: findings.length,
    events: events.length,
    ...(unknownStates.length > 0 && { unknownStates }),
    ...(skipped.length > 0 && { skipped }),
  });
}

/** Warns once per word and configuration of each state word no list names; answers them all. */
function warnUnknownStateWords(deps: CycleDeps, log: Logger, tally: StateWordTally): UnknownStateWord[] {
  const unknown = unknownStateWords(tally, deps.stateLists);
  for (const u of unknown) {
    const said = deps.warnedStateWords.take(u.record, u.word);
    if (said === 'quiet') continue;
    const last = `. No more unknown ${u.record} states are warned of while this configuration runs`;
    log.warn(
      { record: u.record, state: u.word, count: u.count },
      unknownStateWordWarning(u, deps.stateLists) + (said === 'last' ? last : ''),
    );
  }
  return unknown;
}

/** Says what the resolve guard decided: in the log when it held or let go, always in the gauge. */
function reportResolveGuard(deps: CycleDeps, log: Logger, r: ResolveGuardReport): void {
  deps.metrics.resolutionsHeld.set({ source: r.job }, r.decision.hold ? r.resolving : 0);
  const confirm = deps.lifecycle.resolveGuard?.confirm_cycles;
  if (r.decision.reason === 'too many at once') {
    log.warn(
      { resolving: r.resolving, firing: r.firing, suspectCycles: r.decision.suspectCycles, confirmCycles: confirm },
      `${r.resolving} of ${r.firing} firing alerts would resolve at once: held until ${confirm} consecutive cycles say so (alerts.resolve_guard)`,
    );
  } else if (r.decision.reason === 'confirmed') {
    log.warn(
      { resolving: r.resolving, firing: r.firing, cycles: r.decision.confirmedAfter },
      `${r.resolving} alerts resolve at once, confirmed by ${r.decision.confirmedAfter} consecutive cycles`,
    );
  }
}

/** A cycle's alert events in the log: one line each up to {@link LOGGED_EVENTS_MAX}, then one that counts the rest by kind. */
export function logEvents(log: Logger, events: readonly AlertEvent[]): void {
  for (const e of events.slice(0, LOGGED_EVENTS_MAX)) {
    log.info({ event: e.kind, fingerprint: e.fingerprint, severity: e.severity, reason: e.reason }, e.summary);
  }
  if (events.length <= LOGGED_EVENTS_MAX) return;
  const more: Record<string, number> = {};
  for (const e of events.slice(LOGGED_EVENTS_MAX)) more[e.kind] = (more[e.kind] ?? 0) + 1;
  log.info({ more }, `and ${events.length - LOGGED_EVENTS_MAX} more alert events this cycle: the console lists them`);
}

/**
 * The gauges a leader takes up from the store: the open alerts ({@link updateOpenAlerts}) and each
 * job's last success, so that restarted in an outage, an alert on how long ago a job last read
 * still sees it.
 */
export function showStoredGauges(deps: Pick<CycleDeps, 'alerts' | 'metrics' | 'health'>, jobs: Iterable<string>): void {
  updateOpenAlerts(deps);
  for (const job of jobs) {
    const at = deps.health.get(job)?.lastSuccessAt;
    if (at) deps.metrics.lastSuccess.set({ source: job }, at / 1000);
  }
}

/** Sets the open-alerts gauges from the store: firing alerts by check and severity, and the acknowledged ones. */
export function updateOpenAlerts(deps: Pick<CycleDeps, 'alerts' | 'metrics'>): void {
  const rows = deps.alerts.firingCounts();
  const { openAlerts, acknowledgedAlerts } = deps.metrics;
  openAlerts.reset();
  acknowledgedAlerts.reset();
  for (const r of rows) {
    openAlerts.set({ check: r.check, severity: r.severity }, r.n);
    acknowledgedAlerts.set({ check: r.check, severity: r.severity }, r.acknowledged);
  }
}
