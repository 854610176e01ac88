/**
 * The remediation stage: policies decide on open firing alerts inside the cycle's transaction,
 * changes are sent after it commits, the runs they start are followed, and every decision,
 * answer and outcome is written to the audit.
 *
 * The order of things is what makes it safe:
 * 1. `inCycle` (inside the cycle transaction): each policy decides on each alert it covers. To
 *    act, it writes an attempt with its derived idempotency key and body, and an audit row, in that
 *    same transaction. Nothing is sent here: a rollback leaves no trace and sends nothing.
 * 2. `executePending` (after commit, and on its own loop): every planned attempt is sent with its
 *    STORED key and body. A crash before the answer is recorded leaves the attempt planned; the
 *    next start sends it again with the same key, so the service applies it at most once.
 * 3. The answer decides what follows (`change-answer.ts`): follow the run, verify a reused key
 *    with reads, send the same key again, close a refused attempt, stop on the record, or suspend
 *    the policy (`access_denied`: in the app's environment only) and raise one alert.
 * 4. Followed runs are polled with `runs.get` until they finish or `follow_timeout` passes; the
 *    outcome goes to the audit and, as a notice, to the channels the alert's labels route to.
 *
 * Everything lives in SQLite (migrations 004 and 005): a restart resumes sending and following.
 * Suspensions, whole-policy and per-environment alike, are lifted by `start()`, i.e. when the
 * daemon starts or reloads its config: their causes (token rights, plan, writes disabled) are fixed
 * outside deploy-watchdog, and a restart or reload is how an operator says "fixed". A crash-restart
 * thus tries once more; the worst it can cost is one more refused request per scope, never a change.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import { AlertStore, type AlertRow } from '../alerts/alert-store.js';
import { commitFindings, type CommittedCycle } from '../alerts/commit-findings.js';
import { ApiError, ApiResponseError, ApiTransportError } from '../api/errors.js';
import type { ApiClient } from '../api/client.js';
import type { Logger } from '../lib/logger.js';
import { silentLogger } from '../lib/logger.js';
import type { Clock } from '../lib/clock.js';
import { errorText } from '../lib/error-text.js';
import type { Notifier } from '../notify/notifier.js';
import type { Metrics } from '../server/metrics.js';
import type { Store } from '../state/store.js';
import type { ActionTarget, RemediationAction } from './actions/action.js';
import { ACTIONS } from './actions/registry.js';
import { handleFailure, handleResult, type ChangeHandling } from './change-answer.js';
import { idempotencyKey } from './idempotency-key.js';
import { outcomeNotice, outcomeWord, suspensionFinding, type AttemptOutcome } from './outcome-notice.js';
import {
  compilePolicies,
  decidePolicy,
  policyTarget,
  type CompiledPolicy,
  type RemediationSettings,
  type SkipReason,
} from './policy.js';
import { RemediationStore, type AttemptRow, type AttemptUpdate } from './remediation-store.js';
import { runProgress, type RunStates } from './run-progress.js';
import {
  environmentOf,
  scopeOf,
  scopeText,
  suspensionCovering,
  suspensionText,
  type Suspension,
} from './suspension.js';

/** The job name under which suspension alerts live in the alert lifecycle. */
export const REMEDIATION_JOB = 'remediation' as const;

const HOUR_MS = 3_600_000;
/** Skips that are the same decision still in progress, not news: not written to the audit. */
const QUIET_SKIPS: ReadonlySet<SkipReason> = new Set<SkipReason>(['attempt_in_progress']);

/** The parts of the notification pipeline remediation uses. */
export type RemediationNotifier = Pick<Notifier, 'take' | 'notice' | 'router' | 'lifecycleRepeatIntervalMs'>;

/** What {@link createRemediator} needs. */
export interface RemediatorOptions {
  store: Store;
  client: ApiClient;
  /** `config.remediation`. */
  settings: RemediationSettings;
  /** Run state words: `checks.failed_runs.failed_states`, `checks.stuck_runs.active_states`, and the succeeded ones. */
  runStates: RunStates;
  notifier: RemediationNotifier;
  clock: Clock;
  logger?: Logger;
  metrics?: Metrics;
  /** How often a started run is polled. Default 30 s. */
  pollIntervalMs?: number;
  /** First wait before the same key is sent again after an unknown answer; doubles per send. Default 60 s. */
  resendDelayMs?: number;
  /** Longest wait between two sends of the same key. Default 15 min. */
  maxResendDelayMs?: number;
  /** An AlertStore already built over `store`, to share its prepared statements. */
  alertStore?: AlertStore;
}

/** What one `inCycle` decided. */
export interface CycleReport {
  /** Attempts planned (keys recorded), to be sent after commit. */
  planned: number;
  /** Dry-run decisions newly recorded. */
  dryRun: number;
  /** Skips by reason (every skip this cycle, recorded in the audit or not). */
  skipped: Partial<Record<SkipReason, number>>;
  /** Suspension alert events written (and queued) this cycle. */
  events: number;
}

/** What one `executePending` pass did. */
export interface PassReport {
  /** Change requests sent. */
  sent: number;
  /** `runs.get` polls of followed runs. */
  polled: number;
  /** Attempts that reached an outcome. */
  finished: number;
}

/** The remediation stage as the composition root uses it. */
export interface Remediator {
  /**
   * Decides on every open firing alert and records planned attempts (keys before any request)
   * and audit rows. Call INSIDE the cycle's transaction, after the lifecycle; sends nothing.
   * Reads the open alerts itself unless given.
   */
  inCycle(now: number, openAlerts?: readonly AlertRow[]): CycleReport;
  /**
   * The stage of `commitFindings` (`RemediationHook`): {@link inCycle} inside the cycle's
   * transaction, then a wake-up of the send loop. The loop runs only after this synchronous
   * transaction has committed (or rolled back, leaving nothing to send).
   */
  take(cycle: CommittedCycle): void;
  /**
   * Sends due planned attempts with their stored keys, handles the answers, polls followed runs
   * and queues outcome notices. Call after the cycle commits; `start()` also runs it on a loop.
   * Concurrent calls share one pass.
   */
  executePending(signal?: AbortSignal): Promise<PassReport>;
  /** Asks the loop for a pass now (after a cycle committed); never blocks. */
  wake(): void;
  /** Lifts suspensions (see the file comment) and starts the send-and-follow loop. */
  start(): void;
  /** Stops the loop: lets the pass under way finish for up to `deadlineMs`, then aborts it. */
  stop(deadlineMs?: number): Promise<void>;
}

/** Builds the remediator. Throws `PolicyError` for a policy whose matchers cannot be used. */
export function createRemediator(options: RemediatorOptions): Remediator {
  return new RemediatorImpl(options);
}

class RemediatorImpl implements Remediator {
  readonly #o: RemediatorOptions;
  readonly #log: Logger;
  readonly #rs: RemediationStore;
  readonly #alerts: AlertStore;
  readonly #policies: CompiledPolicy[];
  /** This state file's installation id, in every key (`idempotency-key.ts`). */
  readonly #installation: string;
  readonly #pollMs: number;
  readonly #resendMs: number;
  readonly #maxResendMs: number;
  #running: Promise<PassReport> | undefined;
  #again = false;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #loopAbort = new AbortController();
  #sleepAbort: AbortController | undefined;

  constructor(options: RemediatorOptions) {
    this.#o = options;
    this.#log = (options.logger ?? silentLogger).child({ stage: 'remediation' });
    this.#rs = new RemediationStore(options.store);
    this.#alerts = options.alertStore ?? new AlertStore(options.store);
    this.#policies = compilePolicies(options.settings);
    this.#installation = this.#rs.installation();
    this.#pollMs = options.pollIntervalMs ?? 30_000;
    this.#resendMs = options.resendDelayMs ?? 60_000;
    this.#maxResendMs = options.maxResendDelayMs ?? 15 * 60_000;
  }

  // ---- inside the cycle transaction ------------------------------------------------------------

  inCycle(now: number, openAlerts?: readonly AlertRow[]): CycleReport {
    if (!this.#o.store.db.inTransaction) {
      throw new Error(
        'Remediator.inCycle must run inside the cycle transaction, so planned keys commit with the decision',
      );
    }
    const report: CycleReport = { planned: 0, dryRun: 0, skipped: {}, events: 0 };
    const settings = this.#o.settings;
    const alerts = (openAlerts ?? this.#alerts.open()).filter((a) => a.status === 'firing');
    const suspensions = this.#rs.suspensions();
    let actionsLastHour = this.#rs.actionsSince(now - HOUR_MS);

    for (const policy of this.#policies) {
      for (const alert of alerts) {
        const target = policyTarget(policy, alert);
        if (!target) continue;
        const life = alert.firedAt ?? alert.firstSeenAt;
        const history = this.#rs.history(
          policy.config.name,
          policy.action.name,
          target.recordType,
          target.recordId,
          life,
        );
        const suspension = suspensionCovering(suspensions, policy.config.name, environmentOf(alert.labels));
        const decision = decidePolicy(policy, alert, history, {
          enabled: settings.enabled,
          suspended: suspension?.scope.kind ?? null,
          actionsLastHour,
          maxActionsPerHour: settings.max_actions_per_hour,
          now,
        });
        if (decision.kind === 'skip') {
          report.skipped[decision.reason] = (report.skipped[decision.reason] ?? 0) + 1;
          if (!QUIET_SKIPS.has(decision.reason)) this.#recordSkip(policy, alert, target, life, decision.reason, now);
          continue;
        }
        const keyOf = (number: number) =>
          idempotencyKey({
            installation: this.#installation,
            number,
            policy: policy.config.name,
            ...target,
            attempt: decision.attempt,
          });
        const body = policy.action.body(policy.config);
        if (decision.kind === 'dry_run') {
          // The key it would send if it acted now; the number is not taken.
          const key = keyOf(this.#rs.peekKeyNumber());
          const detail = `would send ${policy.action.name} on ${target.recordType} #${target.recordId} with ${JSON.stringify(body)}`;
          if (this.#recordSkip(policy, alert, target, life, 'dry_run', now, { key, detail })) report.dryRun += 1;
          continue;
        }
        this.#plan(policy, alert, target, life, decision.attempt, keyOf(this.#rs.takeKeyNumber()), body, now);
        actionsLastHour += 1;
        report.planned += 1;
      }
    }
    report.events = this.#applySuspensionAlerts(now).length;
    return report;
  }

  take(cycle: CommittedCycle): void {
    const report = this.inCycle(cycle.now);
    if (report.planned > 0 || report.dryRun > 0) this.#log.debug({ job: cycle.job, ...report }, 'remediation decided');
    // Woken now, the loop resumes on a later tick: after this synchronous transaction ends.
    if (report.planned > 0) this.wake();
  }

  #plan(
    policy: CompiledPolicy,
    alert: AlertRow,
    target: ActionTarget,
    life: number,
    attempt: number,
    key: string,
    body: Record<string, unknown>,
    now: number,
  ): void {
    const name = policy.config.name;
    this.#rs.insertAttempt({
      policy: name,
      action: policy.action.name,
      recordType: target.recordType,
      recordId: target.recordId,
      attempt,
      key,
      body,
      fingerprint: alert.fingerprint,
      labels: alert.labels,
      severity: alert.severity,
      summary: alert.summary,
      url: alert.url,
      life,
      plannedAt: now,
    });
    this.#rs.clearLastSkip(name, target.recordType, target.recordId);
    this.#rs.audit({
      ...this.#decisionAuditBase(policy, alert, target, now),
      decision: 'acted',
      reason: `attempt ${attempt} of ${policy.config.max_attempts}`,
      key,
      detail: `${JSON.stringify(body)}; alert: ${alert.summary}`,
    });
    this.#count(name, policy.action.name, 'acted');
    this.#log.info(
      { policy: name, action: policy.action.name, record: `${target.recordType}#${target.recordId}`, key, attempt },
      'remediation planned',
    );
  }

  /** Writes a skip (or dry-run) audit row when its reason or the alert life changed; true when written. */
  #recordSkip(
    policy: CompiledPolicy,
    alert: AlertRow,
    target: ActionTarget,
    life: number,
    reason: SkipReason | 'dry_run',
    now: number,
    extra: { key?: string; detail?: string } = {},
  ): boolean {
    const name = policy.config.name;
    const last = this.#rs.lastSkip(name, target.recordType, target.recordId);
    if (last && last.life === life && last.reason === reason) return false;
    this.#rs.setLastSkip(name, target.recordType, target.recordId, life, reason, now);
    this.#rs.audit({
      ...this.#decisionAuditBase(policy, alert, target, now),
      decision: reason === 'dry_run' ? 'dry_run' : 'skipped',
      reason,
      key: extra.key ?? null,
      detail: extra.detail ?? alert.summary,
    });
    this.#count(name, policy.action.name, reason === 'dry_run' ? 'dry_run' : 'skipped');
    this.#log.info(
      { policy: name, record: `${target.recordType}#${target.recordId}`, reason },
      reason === 'dry_run' ? 'remediation dry run' : 'remediation skipped',
    );
    return true;
  }

  /**
   * The suspended policies as the `remediation` job's complete snapshot: one watchdog alert per
   * suspended policy fires (once), repeats like any alert, and resolves when the suspension is lifted.
   */
  #applySuspensionAlerts(now: number): AlertEvent[] {
    const findings = this.#rs.suspensions().map(suspensionFinding);
    const options = { forCycles: 1, repeatIntervalMs: this.#o.notifier.lifecycleRepeatIntervalMs, logger: this.#log };
    const write = () => [{ job: REMEDIATION_JOB, findings, options }];
    return commitFindings(this.#alerts, { job: REMEDIATION_JOB, now, write }, [this.#o.notifier]);
  }

  // ---- after commit: send, answer, follow ------------------------------------------------------

  executePending(signal?: AbortSignal): Promise<PassReport> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    const run = async (): Promise<PassReport> => {
      const total: PassReport = { sent: 0, polled: 0, finished: 0 };
      do {
        this.#again = false;
        const r = await this.#pass(signal);
        total.sent += r.sent;
        total.polled += r.polled;
        total.finished += r.finished;
      } while (this.#again && !signal?.aborted);
      return total;
    };
    this.#running = run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(signal: AbortSignal | undefined): Promise<PassReport> {
    const report: PassReport = { sent: 0, polled: 0, finished: 0 };
    for (const attempt of this.#rs.due(this.#o.clock.now())) {
      if (signal?.aborted) break;
      const action = ACTIONS[attempt.action as keyof typeof ACTIONS] as RemediationAction | undefined;
      if (!action) {
        // A row written by a newer version, or an action since removed: leave it, say so.
        this.#log.warn({ key: attempt.key, action: attempt.action }, 'attempt of an unknown action; left as it is');
        continue;
      }
      try {
        if (attempt.status === 'planned') {
          const withdrawn = this.#withdrawal(attempt);
          if (withdrawn) {
            this.#withdraw(attempt, withdrawn);
            report.finished += 1;
            continue;
          }
          report.sent += 1;
          if (await this.#send(attempt, action, signal)) report.finished += 1;
        } else {
          report.polled += 1;
          if (await this.#follow(attempt, action, signal)) report.finished += 1;
        }
      } catch (err) {
        // A storage fault or a bug: the attempt stays as stored and is tried on the next pass.
        this.#log.error({ err, key: attempt.key }, 'remediation step failed; will try again');
      }
    }
    return report;
  }

  /**
   * Why a planned attempt that was NEVER sent should not be sent any more: the configuration
   * changed since it was decided (policy removed, remediation switched off, dry run switched on) or
   * the policy was suspended meanwhile, in every environment or in the attempt's. An attempt sent
   * at least once is always sent again with its key, whatever the config says now: it may have
   * been taken, and only its key can find out.
   */
  #withdrawal(attempt: AttemptRow): string | null {
    if (attempt.sendCount > 0) return null;
    const policy = this.#policies.find((p) => p.config.name === attempt.policy);
    if (!policy) return 'policy_removed';
    if (!this.#o.settings.enabled) return 'disabled';
    if (policy.dryRun) return 'dry_run';
    const suspension = suspensionCovering(this.#rs.suspensions(), attempt.policy, environmentOf(attempt.labels));
    if (suspension) return suspension.scope.kind === 'policy' ? 'policy_suspended' : 'environment_paused';
    return null;
  }

  /** Ends a never-sent attempt without sending it; it does not count. */
  #withdraw(attempt: AttemptRow, reason: string): void {
    const now = this.#o.clock.now();
    this.#o.store.transaction(() =>
      this.#close(attempt, now, {
        outcome: 'withdrawn',
        detail: `never sent: ${reason}`,
        counted: false,
        nextAllowedAt: null,
        reason,
      }),
    );
    this.#count(attempt.policy, attempt.action, 'skipped');
    this.#log.info({ policy: attempt.policy, key: attempt.key, reason }, 'planned attempt withdrawn before sending');
  }

  /** Sends one planned attempt with its stored key and body; true when it reached an outcome. */
  async #send(attempt: AttemptRow, action: RemediationAction, signal: AbortSignal | undefined): Promise<boolean> {
    const clock = this.#o.clock;
    const timeout = this.#o.settings.follow_timeout;
    const started = clock.now();
    if (attempt.sendCount > 0 && started - attempt.plannedAt >= timeout) {
      // Sent, never answered readably, for longer than we follow anything: stop re-sending and
      // say that nobody can tell whether it was made. Counted: it may have been.
      this.#finish(attempt, action, { kind: 'unanswered', afterMs: started - attempt.plannedAt }, { counted: true });
      return true;
    }
    this.#o.store.transaction(() =>
      this.#rs.updateAttempt(attempt.id, {
        sendCount: attempt.sendCount + 1,
        firstSentAt: attempt.firstSentAt ?? started,
        lastSentAt: started,
      }),
    );
    const sent: AttemptRow = {
      ...attempt,
      sendCount: attempt.sendCount + 1,
      firstSentAt: attempt.firstSentAt ?? started,
      lastSentAt: started,
    };
    this.#log.info(
      {
        policy: attempt.policy,
        action: attempt.action,
        record: `${attempt.recordType}#${attempt.recordId}`,
        key: attempt.key,
        send: sent.sendCount,
      },
      'sending change',
    );
    let handling: ChangeHandling;
    let said: string;
    try {
      let replayed = false;
      const result = await action.send(this.#o.client, attempt.recordId, attempt.body, {
        idempotencyKey: attempt.key,
        onAnswer: (a) => (replayed = a.replayed),
        ...(signal ? { signal } : {}),
      });
      handling = handleResult(result);
      // The service's own mark: this answer was given to an earlier send of the same key, which
      // is the one that made the change (a crash kept the watchdog from recording it).
      said = replayed ? `${result.state}: replayed, the answer to an earlier send of this key` : result.state;
    } catch (err) {
      handling = handleFailure(err);
      said = describeError(err);
    }
    return this.#answer(sent, action, handling, said, signal);
  }

  /** Carries out the handling of an answer; true when the attempt reached an outcome. */
  async #answer(
    attempt: AttemptRow,
    action: RemediationAction,
    handling: ChangeHandling,
    said: string,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const now = this.#o.clock.now();
    const s = this.#o.settings;
    const backoff = this.#policyBackoff(attempt);
    const answerCode = said.split(':')[0] ?? said;
    const audit = (reason: string, runId: number | null = null) =>
      this.#rs.audit({
        ...this.#auditBase(attempt, now),
        decision: 'answered',
        reason,
        answer: answerCode,
        runId,
        detail: said,
      });
    this.#log.info({ key: attempt.key, answer: said, handling: handling.kind }, 'change answered');

    switch (handling.kind) {
      case 'follow':
        this.#o.store.transaction(() => {
          audit(handling.answer === 'already_running' ? 'joined the run under way' : 'change taken', handling.runId);
          this.#rs.updateAttempt(attempt.id, {
            status: 'following',
            counted: true,
            answer: handling.answer,
            runId: handling.runId,
            followUntil: now + s.follow_timeout,
            nextAt: now,
          });
        });
        if (handling.runId === null) {
          this.#finish({ ...attempt, answer: handling.answer }, action, { kind: 'no_run' }, { counted: true });
          return true;
        }
        return false;
      case 'verify_reused': {
        // The earlier request with this key was taken. Never a fresh key: find its run and follow it.
        this.#o.store.transaction(() => {
          audit('earlier request with this key was taken; verifying with reads');
          this.#rs.updateAttempt(attempt.id, {
            status: 'following',
            counted: true,
            answer: 'idempotency_key_reused',
            runId: null,
            followUntil: now + s.follow_timeout,
            nextAt: now,
          });
        });
        const refreshed = this.#rs.attempt(attempt.id);
        return refreshed ? this.#follow(refreshed, action, signal) : false;
      }
      case 'resend': {
        const delay = Math.max(
          handling.retryAfterMs ?? 0,
          Math.min(this.#maxResendMs, this.#resendMs * 2 ** Math.max(0, attempt.sendCount - 1)),
        );
        this.#o.store.transaction(() => {
          audit(`${handling.reason}: the same key will be sent again`);
          this.#rs.updateAttempt(attempt.id, { nextAt: now + delay });
        });
        return false;
      }
      case 'refused_later':
      case 'wait_auto_retry': {
        // Refused: nothing changed under this key. A later attempt (a new key) may come after the backoff.
        const wait = Math.max(backoff, handling.kind === 'refused_later' ? (handling.retryAfterMs ?? 0) : 0);
        const reason =
          handling.kind === 'wait_auto_retry' ? 'the service will retry by itself' : 'refused for now; try again later';
        this.#o.store.transaction(() => {
          audit(reason);
          this.#close(attempt, now, {
            outcome: handling.code,
            detail: said,
            counted: false,
            nextAllowedAt: now + wait,
            reason,
          });
        });
        this.#count(attempt.policy, attempt.action, 'refused');
        return true;
      }
      case 'stop':
        this.#o.store.transaction(() => audit('this record cannot be changed this way'));
        this.#finish(
          attempt,
          action,
          { kind: 'stopped', code: handling.code, message: said },
          { counted: false, nextAllowedAt: null },
        );
        return true;
      case 'suspend': {
        // How far it reaches is the answer table's to say (`SUSPEND_REACH`), not this switch's.
        const suspension: Suspension = {
          policy: attempt.policy,
          action: attempt.action,
          code: handling.code,
          message: said,
          at: now,
          scope: scopeOf(handling.reach, attempt.labels),
        };
        this.#o.store.transaction(() => {
          audit('refused for a reason only a person can fix');
          this.#close(attempt, now, {
            outcome: 'suspended',
            detail: said,
            counted: false,
            nextAllowedAt: now + backoff,
            reason: handling.code,
          });
          if (this.#rs.suspend(suspension)) {
            this.#rs.audit({
              ...this.#auditBase(attempt, now),
              decision: 'suspended',
              reason: `${handling.code}: ${suspensionText(suspension.scope)}`,
              answer: handling.code,
              detail: said,
            });
            this.#applySuspensionAlerts(now);
          }
        });
        this.#count(attempt.policy, attempt.action, 'failed');
        this.#log.warn(
          { policy: attempt.policy, code: handling.code, scope: scopeText(suspension.scope) },
          'remediation policy suspended',
        );
        return true;
      }
      case 'failed':
        this.#o.store.transaction(() => audit('refused as a bad request'));
        this.#finish(
          attempt,
          action,
          { kind: 'failed_request', code: handling.code, message: said },
          { counted: false },
        );
        return true;
    }
  }

  /** Polls a followed run once; true when it reached an outcome. */
  async #follow(attempt: AttemptRow, action: RemediationAction, signal: AbortSignal | undefined): Promise<boolean> {
    const clock = this.#o.clock;
    const opts = signal ? { signal } : {};
    let runId = attempt.runId;
    try {
      if (runId === null) {
        runId = await action.findStartedRun(
          this.#o.client,
          { recordId: attempt.recordId, firstSentAt: attempt.firstSentAt, plannedAt: attempt.plannedAt },
          signal,
        );
        if (runId === null) {
          this.#finish(attempt, action, { kind: 'unverified' }, { counted: true });
          return true;
        }
        const found = runId;
        this.#o.store.transaction(() => this.#rs.updateAttempt(attempt.id, { runId: found }));
        attempt = { ...attempt, runId: found };
      }
      const run = await this.#o.client.runs.get(runId, opts);
      const now = clock.now();
      const progress = runProgress(run, this.#o.runStates);
      switch (progress.kind) {
        case 'going':
          if (attempt.followUntil !== null && now >= attempt.followUntil) {
            this.#finish(
              attempt,
              action,
              { kind: 'follow_timeout', afterMs: now - (attempt.firstSentAt ?? attempt.plannedAt) },
              { counted: true },
            );
            return true;
          }
          this.#o.store.transaction(() => this.#rs.updateAttempt(attempt.id, { nextAt: now + this.#pollMs }));
          return false;
        case 'succeeded':
          this.#finish(attempt, action, { kind: 'succeeded' }, { counted: true });
          return true;
        case 'failed':
          this.#finish(
            attempt,
            action,
            { kind: 'run_failed', step: progress.step, reason: progress.reason, watcher: progress.watcher },
            { counted: true },
          );
          return true;
        case 'ended':
          this.#finish(attempt, action, { kind: 'run_ended', state: progress.state }, { counted: true });
          return true;
      }
    } catch (err) {
      const now = clock.now();
      if (err instanceof ApiError && err.code === 'not_found' && runId !== null) {
        this.#finish(attempt, action, { kind: 'run_ended', state: 'gone (not_found)' }, { counted: true });
        return true;
      }
      if (attempt.followUntil !== null && now >= attempt.followUntil) {
        this.#finish(
          attempt,
          action,
          { kind: 'follow_timeout', afterMs: now - (attempt.firstSentAt ?? attempt.plannedAt) },
          { counted: true },
        );
        return true;
      }
      // A read that failed: the run is not forgotten, only read again later.
      this.#log.warn(
        { key: attempt.key, runId, error: describeError(err) },
        'cannot read the followed run; will try again',
      );
      this.#o.store.transaction(() => this.#rs.updateAttempt(attempt.id, { nextAt: now + this.#pollMs }));
      return false;
    }
  }

  /**
   * Ends an attempt with an outcome: the attempt row, its audit row and the notice to the alert's
   * channels commit together.
   */
  #finish(
    attempt: AttemptRow,
    action: RemediationAction,
    outcome: AttemptOutcome,
    opts: { counted: boolean; nextAllowedAt?: number | null },
  ): void {
    const now = this.#o.clock.now();
    const word = outcomeWord(outcome);
    const notice = outcomeNotice(attempt, action.words, outcome);
    const channels = this.#o.notifier.router.route(attempt.labels, attempt.severity).map((t) => t.channel);
    this.#o.store.transaction(() => {
      this.#close(attempt, now, {
        outcome: word,
        detail: notice.title,
        counted: opts.counted,
        nextAllowedAt: opts.nextAllowedAt === undefined ? now + this.#policyBackoff(attempt) : opts.nextAllowedAt,
        reason: notice.title,
      });
      if (channels.length > 0) this.#o.notifier.notice(notice, channels, now);
    });
    const metric = outcome.kind === 'succeeded' ? 'succeeded' : outcome.kind === 'no_run' ? 'accepted' : 'failed';
    this.#count(attempt.policy, attempt.action, metric);
    this.#log.info({ policy: attempt.policy, key: attempt.key, runId: attempt.runId, outcome: word }, notice.title);
  }

  /** Marks an attempt finished and writes its outcome audit row (inside the caller's transaction). */
  #close(
    attempt: AttemptRow,
    now: number,
    o: { outcome: string; detail: string; counted: boolean; nextAllowedAt: number | null; reason: string },
  ): void {
    const update: AttemptUpdate = {
      status: 'finished',
      counted: o.counted,
      outcome: o.outcome,
      outcomeDetail: o.detail,
      finishedAt: now,
      nextAt: o.nextAllowedAt,
    };
    this.#rs.updateAttempt(attempt.id, update);
    this.#rs.audit({
      ...this.#auditBase(attempt, now),
      decision: 'outcome',
      reason: o.reason,
      answer: attempt.answer,
      outcome: o.outcome,
      detail: o.detail,
    });
  }

  /** The audit row of a policy's decision on an alert's record, before any attempt was sent. */
  #decisionAuditBase(policy: CompiledPolicy, alert: AlertRow, target: ActionTarget, now: number) {
    return {
      at: now,
      policy: policy.config.name,
      action: policy.action.name,
      recordType: target.recordType,
      recordId: target.recordId,
      fingerprint: alert.fingerprint,
      environment: environmentOf(alert.labels),
      answer: null,
      outcome: null,
      runId: null,
    };
  }

  /** The audit row of an attempt: its policy, record and key. */
  #auditBase(attempt: AttemptRow, now: number) {
    return {
      at: now,
      policy: attempt.policy,
      action: attempt.action,
      recordType: attempt.recordType,
      recordId: attempt.recordId,
      fingerprint: attempt.fingerprint,
      environment: environmentOf(attempt.labels),
      key: attempt.key,
      answer: null,
      outcome: null,
      runId: attempt.runId,
      detail: null,
    };
  }

  /** The backoff of the attempt's policy as configured now (0 when the policy is gone). */
  #policyBackoff(attempt: AttemptRow): number {
    return this.#policies.find((p) => p.config.name === attempt.policy)?.config.backoff ?? 0;
  }

  #count(policy: string, action: string, outcome: string): void {
    this.#o.metrics?.remediation.inc({ policy, action, outcome });
  }

  // ---- the loop ----------------------------------------------------------------------------------

  start(): void {
    if (this.#loop) return;
    const now = this.#o.clock.now();
    this.#o.store.transaction(() => {
      for (const s of this.#rs.clearSuspensions()) {
        this.#rs.audit({
          at: now,
          policy: s.policy,
          action: s.action,
          recordType: null,
          recordId: null,
          fingerprint: null,
          environment: s.scope.kind === 'environment' ? s.scope.environment : null,
          decision: 'resumed',
          reason: `lifted at start (restart or config reload): ${suspensionText(s.scope)}`,
          key: null,
          answer: s.code,
          outcome: null,
          runId: null,
          detail: `suspended since ${new Date(s.at).toISOString()}: ${s.message}`,
        });
        this.#log.info(
          { policy: s.policy, code: s.code, scope: scopeText(s.scope) },
          'remediation policy suspension lifted',
        );
      }
      this.#applySuspensionAlerts(now);
    });
    this.#stopping = false;
    this.#loopAbort = new AbortController();
    this.#loop = this.#runLoop();
  }

  async #runLoop(): Promise<void> {
    const signal = this.#loopAbort.signal;
    while (!this.#stopping) {
      try {
        await this.executePending(signal);
      } catch (err) {
        this.#log.error({ err }, 'remediation pass failed');
      }
      if (this.#stopping) break;
      this.#sleepAbort = new AbortController();
      try {
        await this.#o.clock.sleep(this.#nextWakeIn(), this.#sleepAbort.signal);
      } catch {
        // woken early: wake() or stop()
      }
    }
  }

  /** Until the next due send or poll, at most one poll interval. */
  #nextWakeIn(): number {
    const now = this.#o.clock.now();
    const next = this.#rs.nextDue();
    if (next === null) return this.#pollMs;
    return Math.max(0, Math.min(this.#pollMs, next - now));
  }

  wake(): void {
    this.#sleepAbort?.abort();
  }

  async stop(deadlineMs = 10_000): Promise<void> {
    const loop = this.#loop;
    if (!loop) return;
    this.#stopping = true;
    this.wake();
    const timer = new AbortController();
    // Let the pass under way end by itself; past the deadline, abort its requests. An aborted
    // send leaves its attempt planned: the next start sends the same key again.
    const deadline = this.#o.clock.sleep(deadlineMs, timer.signal).then(
      () => this.#loopAbort.abort(),
      () => undefined,
    );
    await loop;
    timer.abort();
    await deadline;
    this.#loop = undefined;
  }
}

/** A short text of a failed call for the audit: `code: message`, never a header or the token. */
function describeError(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.serviceMessage}`;
  if (err instanceof ApiTransportError) return `${err.reason}: no answer`;
  if (err instanceof ApiResponseError) return `${err.problem}: ${err.detail}`;
  return errorText(err);
}
