/**
 * Sending, answering and following, after the cycle has committed: every planned attempt due is
 * sent with its STORED key and body (a crash before the answer is recorded leaves it planned, and
 * the next pass sends the same key again, so the service applies it at most once); the answer is
 * carried out as the answer table says (`answerStep` in `change-answer.ts`); followed runs are
 * polled with `runs.get` until they finish or `follow_timeout` passes, and the outcome goes to the
 * audit and, as a notice, to the channels the alert's labels route to.
 */
import { ApiError, ApiResponseError, ApiTransportError } from '../api/errors.js';
import type { ApiClient } from '../api/client.js';
import { latestWaitEnd, warnWaitsEndEarly, type Clock } from '../lib/clock.js';
import type { Notifier } from '../notify/notifier.js';
import { FencedError } from '../state/fenced-error.js';
import type { RemediationAction } from './actions/action.js';
import { ACTIONS } from './actions/registry.js';
import { answerStep, handleFailure, handleResult, MAX_ASKED_WAIT_MS, type ChangeHandling } from './change-answer.js';
import { outcomeNotice, outcomeSucceeded, outcomeWord, startedNotice, type AttemptOutcome } from './outcome-notice.js';
import { findTakenBackup, readBackup, type BackupWords } from './backup-readback.js';
import { errorText } from '../lib/error-text.js';
import type { PlannerParts } from './cycle-planner.js';
import type { AttemptRow } from './remediation-store.js';
import { policyTarget, productionNotNamed } from './policy.js';
import { runProgress, type RunStates } from './run-progress.js';
import { toldFailedAt } from '../detectors/run-lineage.js';
import { environmentOf, scopeOf, scopeText, suspensionCovering, type Suspension } from './suspension.js';

/** What one pass did. */
export interface PassReport {
  /** Change requests sent. */
  sent: number;
  /** `runs.get` polls of followed runs. */
  polled: number;
  /** Attempts that reached an outcome. */
  finished: number;
}

/** What sending and following work with: the planner's parts, and the API's. */
export interface SenderParts extends PlannerParts {
  client: ApiClient;
  clock: Clock;
  /** Run state words: `checks.failed_runs.failed_states`, `checks.stuck_runs.active_states`, and the succeeded ones. */
  runStates: RunStates;
  /** Backup state words (`checks.backups`), for reading back a backup taken. */
  backupStates: BackupWords;
  /** How often a followed run is read (`remediation.poll_interval`). */
  pollMs: number;
  notifier: Pick<Notifier, 'notice' | 'router' | 'progressChannels'>;
}

/** Sends planned attempts, carries out their answers and follows their runs. */
export class SendAndFollow {
  constructor(private readonly p: SenderParts) {}

  /** Sends the due planned attempts, polls the due followed runs; one at a time, oldest first. */
  async pass(signal: AbortSignal | undefined): Promise<PassReport> {
    const report: PassReport = { sent: 0, polled: 0, finished: 0 };
    for (const attempt of this.#due()) {
      if (signal?.aborted) break;
      const action = ACTIONS.find((a) => a.name === attempt.action) as RemediationAction | undefined;
      if (!action) {
        // A row written by a newer version, or an action since removed: leave it, say so.
        this.p.log.warn({ key: attempt.key, action: attempt.action }, 'attempt of an unknown action; left as it is');
        this.#later(attempt);
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
        // No longer the leader: the pass ends here; the next leader sends with the stored key.
        if (err instanceof FencedError) throw err;
        // A storage fault or a bug: the attempt stays as stored and is tried again at the next poll.
        this.p.log.error({ err, key: attempt.key }, 'remediation step failed; will try again');
        this.#later(attempt);
      }
    }
    return report;
  }

  /**
   * The attempts due now, and those set further ahead than any wait this code sets (a poll, a resend,
   * a Retry-After): the clock went back since, and honoured they would wait the step too; said once.
   */
  #due(): AttemptRow[] {
    const now = this.p.clock.now();
    const latest = latestWaitEnd(now, Math.max(this.p.pollMs, MAX_ASKED_WAIT_MS));
    const due = this.p.rs.due(now, latest);
    const early = due.flatMap((a) => (a.nextAt !== null && a.nextAt > latest ? [a.nextAt] : []));
    warnWaitsEndEarly(this.p.log, 'remediation attempts are taken up early', early, now);
    return due;
  }

  /**
   * Leaves an attempt as it is until the next poll interval: still due, it would be taken again by
   * the very next pass, at once (the loop sleeps until the next due attempt), for ever. When even
   * this cannot be written (the store is failing), the pass fails, and the loop backs off. False, as
   * every step that leaves an attempt for later answers: it has not reached its outcome.
   */
  #later(attempt: AttemptRow): false {
    this.p.store.transaction(() => this.p.rs.updateAttempt(attempt.id, { nextAt: this.p.clock.now() + this.p.pollMs }));
    return false;
  }

  /** Until the next due send or poll, at most one poll interval. */
  nextWakeIn(): number {
    const next = this.p.rs.nextDue();
    if (next === null) return this.p.pollMs;
    return Math.max(0, Math.min(this.p.pollMs, next - this.p.clock.now()));
  }

  /**
   * Why a planned attempt that was NEVER sent should not be sent any more: the configuration
   * changed since it was decided (policy removed, remediation switched off, dry run switched on),
   * the policy was suspended meanwhile, in every environment or in the attempt's, its alert no
   * longer fires (a cycle resolved it while the attempt waited its turn), or the policy no longer
   * covers that alert (a reload narrowed it). An attempt sent at least once is always sent again
   * with its key, whatever the config or the alert says now: it may have been taken, and only its
   * key can find out.
   */
  #withdrawal(attempt: AttemptRow): string | null {
    if (attempt.sendCount > 0) return null;
    const policy = this.p.policies.find((p) => p.config.name === attempt.policy);
    if (!policy) return 'policy_removed';
    if (!this.p.settings.enabled) return 'disabled';
    if (policy.dryRun) return 'dry_run';
    const suspension = suspensionCovering(this.p.rs.suspensions(), attempt.policy, environmentOf(attempt.labels));
    if (suspension) return suspension.scope.kind === 'policy' ? 'policy_suspended' : 'environment_paused';
    const alert = this.p.alerts.get(attempt.fingerprint);
    if (alert?.status !== 'firing') return 'alert_resolved';
    const target = policyTarget(policy, alert);
    if (
      productionNotNamed(policy, alert.labels) ||
      target?.recordType !== attempt.recordType ||
      target.recordId !== attempt.recordId
    ) {
      return 'not_covered';
    }
    return null;
  }

  /** Ends a never-sent attempt without sending it; it does not count. */
  #withdraw(attempt: AttemptRow, reason: string): void {
    const now = this.p.clock.now();
    this.p.store.transaction(() =>
      this.#close(attempt, now, {
        outcome: 'withdrawn',
        detail: `never sent: ${reason}`,
        counted: false,
        nextAllowedAt: null,
        reason,
      }),
    );
    this.p.audit.count(attempt.policy, attempt.action, 'skipped');
    this.p.log.info({ policy: attempt.policy, key: attempt.key, reason }, 'planned attempt withdrawn before sending');
  }

  /** Sends one planned attempt with its stored key and body; true when it reached an outcome. */
  async #send(attempt: AttemptRow, action: RemediationAction, signal: AbortSignal | undefined): Promise<boolean> {
    const started = this.p.clock.now();
    if (attempt.sendCount > 0 && started - attempt.plannedAt >= this.p.settings.follow_timeout) {
      // Sent, never answered readably, for longer than we follow anything: stop re-sending and
      // say that nobody can tell whether it was made. Counted: it may have been.
      return this.#finish(attempt, action, { kind: 'unanswered', afterMs: started - attempt.plannedAt });
    }
    const sending = {
      sendCount: attempt.sendCount + 1,
      firstSentAt: attempt.firstSentAt ?? started,
      lastSentAt: started,
    };
    this.p.store.transaction(() => this.p.rs.updateAttempt(attempt.id, sending));
    const sent: AttemptRow = { ...attempt, ...sending };
    this.p.log.info(
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
      const result = await action.send(this.p.client, attempt.recordId, attempt.body, {
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

  /**
   * Carries out the answer table's step for an answer, in one transaction: the `answered` audit
   * row, the attempt's update, its end (and notice) and a suspension; then reads the run at once
   * where the step says so. True when the attempt reached an outcome.
   */
  async #answer(
    attempt: AttemptRow,
    action: RemediationAction,
    handling: ChangeHandling,
    said: string,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const now = this.p.clock.now();
    const step = answerStep(handling, {
      now,
      said,
      sendCount: attempt.sendCount,
      followTimeoutMs: this.p.settings.follow_timeout,
      backoffMs: this.#policyBackoff(attempt),
    });
    this.p.log.info({ key: attempt.key, answer: said, handling: handling.kind }, 'change answered');
    const after: AttemptRow = { ...attempt, ...step.update };
    const suspension: Suspension | null = step.suspend && {
      policy: attempt.policy,
      action: attempt.action,
      code: step.suspend.code,
      message: said,
      at: now,
      scope: scopeOf(step.suspend.reach, attempt.labels),
    };
    const end = step.end;
    const told = end?.kind === 'told' ? this.#ending(after, action, end.outcome, end, now) : undefined;
    // Accepted and not over: the channels that keep a message per alert say it has started.
    const started = handling.kind === 'follow' && end === null && attempt.runId === null;
    this.p.store.transaction(() => {
      this.p.audit.answered(attempt, now, step.audit.reason, step.audit.runId, said);
      this.p.rs.updateAttempt(attempt.id, step.update);
      if (started) this.#tellStarted(after, action, now);
      told?.write();
      // Closed without a notice (a refusal; a suspension): its outcome, reason and next time as the table says.
      if (end?.kind === 'closed') this.#close(after, now, { ...end, detail: said, counted: false });
      if (suspension && this.p.rs.suspend(suspension)) {
        this.p.audit.suspended(attempt, now, suspension);
        this.p.alertSuspensions(now);
      }
    });
    told?.written();
    if (end?.kind === 'closed') this.p.audit.count(attempt.policy, attempt.action, end.metric);
    if (suspension) {
      this.p.log.warn(
        { policy: attempt.policy, code: suspension.code, scope: scopeText(suspension.scope) },
        'remediation policy suspended',
      );
    }
    if (step.pollNow) {
      const refreshed = this.p.rs.attempt(attempt.id);
      return refreshed ? this.#follow(refreshed, action, signal) : false;
    }
    return end !== null;
  }

  /** Polls a followed run once; true when it reached an outcome. */
  async #follow(attempt: AttemptRow, action: RemediationAction, signal: AbortSignal | undefined): Promise<boolean> {
    const { clock, client, store, rs } = this.p;
    if (attempt.readbackUntil !== null) return this.#readBack(attempt, action, signal);
    let runId = attempt.runId;
    try {
      if (runId === null) {
        const told = attempt.fingerprint === null ? undefined : this.p.alerts.get(attempt.fingerprint);
        const facts = { ...attempt, toldFailedAt: told ? toldFailedAt(told.details) : null };
        runId = await action.findStartedRun(client, facts, signal);
        if (runId === null) return this.#finish(attempt, action, { kind: 'unverified' });
        store.transaction(() => rs.updateAttempt(attempt.id, { runId }));
        attempt = { ...attempt, runId };
      }
      const run = await client.runs.get(runId, signal ? { signal } : {});
      const now = clock.now();
      const progress = runProgress(run, this.p.runStates);
      switch (progress.kind) {
        case 'going':
          if (this.#followedTooLong(attempt, action, now)) return true;
          return this.#later(attempt);
        case 'succeeded': {
          const windowMs = this.#readBackFor(attempt, action);
          if (windowMs === null) return this.#finish(attempt, action, { kind: 'succeeded' });
          // A backup taken: read it back before saying how it went.
          const readbackUntil = now + windowMs;
          store.transaction(() => rs.updateAttempt(attempt.id, { readbackUntil, nextAt: now }));
          return this.#readBack({ ...attempt, readbackUntil }, action, signal);
        }
        case 'run_failed':
        case 'run_ended':
          return this.#finish(attempt, action, progress);
      }
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found' && runId !== null)
        return this.#finish(attempt, action, { kind: 'run_ended', state: 'gone (not_found)' });
      if (this.#followedTooLong(attempt, action, clock.now())) return true;
      // A read that failed: the run is not forgotten, only read again later.
      this.p.log.warn(
        { key: attempt.key, runId, error: describeError(err) },
        'cannot read the followed run; will try again',
      );
      return this.#later(attempt);
    }
  }

  /** How long the backup an attempt's run took is read back (its policy's `readback`); null: not read back. */
  #readBackFor(attempt: AttemptRow, action: RemediationAction): number | null {
    const policy = this.p.policies.find((p) => p.config.name === attempt.policy);
    return policy && action.readBackFor ? action.readBackFor(policy.config) : null;
  }

  /**
   * Reads back the backup a succeeded run took (`backup-readback.ts`) once; true when the attempt
   * reached its outcome: the backup settled, or the window passed and it is told as it stands.
   */
  async #readBack(attempt: AttemptRow, action: RemediationAction, signal: AbortSignal | undefined): Promise<boolean> {
    const { clock, client, store, rs } = this.p;
    const windowMs = this.#readBackFor(attempt, action) ?? 0;
    const over = () => attempt.readbackUntil !== null && clock.now() >= attempt.readbackUntil;
    try {
      // The answer named it; else (no id, or a reused key's lost answer) the app's newest since the change.
      const backupId = attempt.backupId ?? (await findTakenBackup(client, attempt, signal));
      if (backupId === null)
        return this.#finish(attempt, action, { kind: 'backup_unread', why: 'no backup of the app since the change' });
      if (attempt.backupId === null) store.transaction(() => rs.updateAttempt(attempt.id, { backupId }));
      const reading = readBackup(await client.backups.get(backupId, signal ? { signal } : {}), this.p.backupStates);
      if (reading.settled || over()) return this.#finish(attempt, action, { kind: 'backup_read', reading, windowMs });
      return this.#later(attempt);
    } catch (err) {
      const gone = err instanceof ApiError && err.code === 'not_found';
      if (gone || over()) {
        const why = gone ? `backup #${attempt.backupId ?? '?'} is not found` : describeError(err);
        return this.#finish(attempt, action, { kind: 'backup_unread', why });
      }
      this.p.log.warn({ key: attempt.key, error: describeError(err) }, 'cannot read back the backup; will try again');
      return this.#later(attempt);
    }
  }

  /** Ends a followed attempt past its `follow_timeout` ("outcome unknown"); true when it did. */
  #followedTooLong(attempt: AttemptRow, action: RemediationAction, now: number): boolean {
    if (attempt.followUntil === null || now < attempt.followUntil) return false;
    const afterMs = now - (attempt.firstSentAt ?? attempt.plannedAt);
    return this.#finish(attempt, action, { kind: 'follow_timeout', afterMs });
  }

  /**
   * Ends a sent attempt with an outcome the alert's channels are told: the attempt row, its audit
   * row and the notice commit together. Counted: its change was, or may have been, taken. True, as
   * every step that ends an attempt answers: it reached its outcome.
   */
  #finish(attempt: AttemptRow, action: RemediationAction, outcome: AttemptOutcome): true {
    const ending = this.#ending(attempt, action, outcome, { counted: true }, this.p.clock.now());
    this.p.store.transaction(ending.write);
    ending.written();
    return true;
  }

  /** The channels the attempt's alert is routed to: where its notices go. */
  #alertChannels(attempt: AttemptRow): string[] {
    return this.p.notifier.router.route(attempt.labels, attempt.severity).map((t) => t.channel);
  }

  /** Tells the alert's channels that show progress (a living message) that the attempt started. */
  #tellStarted(attempt: AttemptRow, action: RemediationAction, now: number): void {
    const channels = this.#alertChannels(attempt).filter((c) => this.p.notifier.progressChannels.has(c));
    if (channels.length > 0) this.p.notifier.notice(startedNotice(attempt, action.words), channels, now);
  }

  /**
   * The end of an attempt with an outcome the channels are told, in two halves: `write` (inside a
   * transaction: the attempt row, its audit row, the notice) and `written` (after the commit: the
   * metric, the log line).
   */
  #ending(
    attempt: AttemptRow,
    action: RemediationAction,
    outcome: AttemptOutcome,
    opts: { counted: boolean; nextAllowedAt?: number | null },
    now: number,
  ): { write: () => void; written: () => void } {
    const word = outcomeWord(outcome);
    const notice = outcomeNotice(attempt, action.words, outcome);
    const channels = this.#alertChannels(attempt);
    const metric = outcomeSucceeded(outcome) ? 'succeeded' : outcome.kind === 'no_run' ? 'accepted' : 'failed';
    return {
      write: () => {
        this.#close(attempt, now, {
          outcome: word,
          detail: notice.title,
          counted: opts.counted,
          nextAllowedAt: opts.nextAllowedAt === undefined ? now + this.#policyBackoff(attempt) : opts.nextAllowedAt,
          reason: notice.title,
        });
        if (channels.length > 0) this.p.notifier.notice(notice, channels, now);
      },
      written: () => {
        this.p.audit.count(attempt.policy, attempt.action, metric);
        this.p.log.info(
          { policy: attempt.policy, key: attempt.key, runId: attempt.runId, outcome: word },
          notice.title,
        );
      },
    };
  }

  /** Marks an attempt finished and writes its outcome audit row (inside the caller's transaction). */
  #close(
    attempt: AttemptRow,
    now: number,
    o: { outcome: string; detail: string; counted: boolean; nextAllowedAt: number | null; reason: string },
  ): void {
    this.p.rs.updateAttempt(attempt.id, {
      status: 'finished',
      counted: o.counted,
      outcome: o.outcome,
      outcomeDetail: o.detail,
      finishedAt: now,
      nextAt: o.nextAllowedAt,
    });
    this.p.audit.outcome(attempt, now, { outcome: o.outcome, reason: o.reason, detail: o.detail });
  }

  /** The backoff of the attempt's policy as configured now (0 when the policy is gone). */
  #policyBackoff(attempt: AttemptRow): number {
    return this.p.policies.find((p) => p.config.name === attempt.policy)?.config.backoff ?? 0;
  }
}

/** A short text of a failed call for the audit: `code: message`, never a header or the token. */
function describeError(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.serviceMessage}`;
  if (err instanceof ApiTransportError) return `${err.reason}: no answer`;
  if (err instanceof ApiResponseError) return `${err.problem}: ${err.detail}`;
  return errorText(err);
}
