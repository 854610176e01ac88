/**
 * Planning, inside the cycle's transaction: each policy decides on each open firing alert it
 * covers (`policy.ts`). To act, it records an attempt with its idempotency key and body, and an
 * audit row, in that same transaction. Nothing is sent here: a rollback leaves no trace and sends
 * nothing. A skip is written to the audit when its reason (or the alert's life) changes, not every
 * cycle.
 */
import type { AlertEvent } from '../alerts/alert-event.js';
import type { AlertRow, AlertStore } from '../alerts/alert-store.js';
import { activeSilenceFor, listSilences, type Silence } from '../alerts/silences.js';
import { clockWentBack, latestWaitEnd } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Store } from '../state/store.js';
import { MAX_ASKED_WAIT_MS } from './change-answer.js';
import { idempotencyKey } from './idempotency-key.js';
import type { ActionTarget, RemediationAction } from './actions/action.js';
import {
  decidePolicy,
  policyTarget,
  requestablePolicy,
  type CompiledPolicy,
  type DecisionContext,
  type RecordHistory,
  type RemediationSettings,
  type SkipReason,
} from './policy.js';
import type { AuditedDecision, RemediationAudit } from './remediation-audit.js';
import type { RemediationStore } from './remediation-store.js';
import { environmentOf, suspensionCovering, type Suspension } from './suspension.js';

const HOUR_MS = 3_600_000;
/**
 * Skips that are not news, counted in the report but not written to the audit: the same decision
 * still in progress, or a policy that by its config acts only when a person asks (a row per alert
 * said nothing the config did not, and under a button-only policy buried `/actions` in them).
 */
const QUIET_SKIPS: ReadonlySet<SkipReason> = new Set<SkipReason>(['attempt_in_progress', 'not_automatic']);

/** What one cycle's planning decided. */
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

/** The policy a person's request was decided by, and its action. */
type DecidedBy = { policy: string; action: RemediationAction };

/** What a person's request for a remediation came to ({@link CyclePlanner.onRequest}), named. */
export type RequestOutcome =
  /** One attempt planned under `key`: the send loop sends it. */
  | (DecidedBy & { outcome: 'planned'; key: string; attempt: number; maxAttempts: number })
  /** The policy is in dry run: nothing will be sent; `key` is the one it would send. */
  | (DecidedBy & { outcome: 'dry_run'; key: string })
  /**
   * The policy does not act now, and why: an attempt under way, attempts used up, the backoff (until
   * `nextAllowedAt`), a suspension, remediation off, … Nothing was planned.
   */
  | (DecidedBy & { outcome: 'skipped'; reason: SkipReason; nextAllowedAt: number | null })
  /** No policy covers the alert (any more): nothing to ask for. */
  | { outcome: 'not_covered' };

/** What the planner works with. */
export interface PlannerParts {
  store: Store;
  rs: RemediationStore;
  alerts: AlertStore;
  settings: RemediationSettings;
  policies: readonly CompiledPolicy[];
  audit: RemediationAudit;
  log: Logger;
  /** Writes the suspensions as alerts (`suspension-alerts.ts`). */
  alertSuspensions: (now: number) => AlertEvent[];
}

/** Decides, per policy and open firing alert, inside the cycle's transaction. */
export class CyclePlanner {
  /** This state file's installation id, in every key (`idempotency-key.ts`). */
  readonly #installation: string;

  constructor(private readonly p: PlannerParts) {
    this.#installation = p.rs.installation();
  }

  /**
   * Decides on every open firing alert and records planned attempts (keys before any request)
   * and audit rows. Call INSIDE the cycle's transaction, after the lifecycle; sends nothing.
   */
  inCycle(now: number): CycleReport {
    const { rs } = this.p;
    if (!this.p.store.db.inTransaction) {
      throw new Error(
        'Remediator.inCycle must run inside the cycle transaction, so planned keys commit with the decision',
      );
    }
    const report: CycleReport = { planned: 0, dryRun: 0, skipped: {}, events: 0 };
    const alerts = this.p.alerts.open().filter((a) => a.status === 'firing');
    const suspensions = rs.suspensions();
    let actionsLastHour = this.#actionsLastHour(now);
    const silenceOf = this.#silences(now);

    for (const policy of this.p.policies) {
      for (const alert of alerts) {
        const target = policyTarget(policy, alert);
        if (!target) continue;
        const on = decided(policy, alert, target, now);
        const silence = silenceOf(alert);
        const { decision } = this.#decide(on, suspensions, actionsLastHour, { silenced: silence !== undefined });
        if (decision.kind === 'skip') {
          report.skipped[decision.reason] = (report.skipped[decision.reason] ?? 0) + 1;
          if (!QUIET_SKIPS.has(decision.reason)) this.#recordSkip(on, { reason: decision.reason, silence });
          continue;
        }
        const body = policy.action.body(policy.config);
        if (decision.kind === 'dry_run') {
          // The key it would send if it acted now; the number is not taken.
          const key = this.#keyOf(on, decision.attempt, rs.peekKeyNumber());
          if (this.#recordSkip(on, { reason: 'dry_run', key, body })) report.dryRun += 1;
          continue;
        }
        this.#plan(on, decision.attempt, this.#keyOf(on, decision.attempt, rs.takeKeyNumber()), body);
        actionsLastHour += 1;
        report.planned += 1;
      }
    }
    report.events = this.p.alertSuspensions(now).length;
    return report;
  }

  /**
   * A person asks for the action of the first policy that covers a firing alert, now (the Slack
   * app's Retry now): decided as a cycle decides (suspensions, attempts, backoff, dry run, the
   * hourly limit; `automatic: false` is no bar), and carried out the same way: acting plans one
   * attempt with its key and body, to be sent by the same loop; a dry run records the key it would
   * send. Every answer is written to the audit with who asked, even a repeated one (each is a
   * person's click). Call INSIDE a transaction.
   */
  onRequest(alert: AlertRow, asker: string, now: number): RequestOutcome {
    const { rs, settings, audit } = this.p;
    const covering = requestablePolicy(this.p.policies, settings.enabled, alert);
    if (!covering) return { outcome: 'not_covered' };
    const { policy, target } = covering;
    const on = decided(policy, alert, target, now);
    const asked = { requested: true };
    const { decision, history } = this.#decide(on, rs.suspensions(), this.#actionsLastHour(now), asked);
    const named: DecidedBy = { policy: policy.config.name, action: policy.action };
    if (decision.kind === 'skip') {
      audit.skipped(on, decision.reason, asker);
      return { outcome: 'skipped', ...named, reason: decision.reason, nextAllowedAt: history.nextAllowedAt };
    }
    const body = policy.action.body(policy.config);
    if (decision.kind === 'dry_run') {
      const key = this.#keyOf(on, decision.attempt, rs.peekKeyNumber());
      audit.dryRun(on, { key, body }, asker);
      return { outcome: 'dry_run', ...named, key };
    }
    const key = this.#keyOf(on, decision.attempt, rs.takeKeyNumber());
    this.#plan(on, decision.attempt, key, body, asker);
    return { outcome: 'planned', ...named, key, attempt: decision.attempt, maxAttempts: policy.config.max_attempts };
  }

  /**
   * The silence in force that mutes an alert, where silences hold automatic moves
   * (`remediation.during_silence: hold`), read once per cycle and asked once per alert.
   */
  #silences(now: number): (alert: AlertRow) => Silence | undefined {
    if (this.p.settings.during_silence !== 'hold') return () => undefined;
    const silences = listSilences(this.p.store, { now });
    const found = new Map<string, Silence | undefined>();
    return (alert) => {
      if (!found.has(alert.fingerprint)) found.set(alert.fingerprint, activeSilenceFor(silences, alert.labels, now));
      return found.get(alert.fingerprint);
    };
  }

  /**
   * What the policy decides on the record, under the suspensions and the actions of the last hour;
   * `requested`: a person asked; `silenced`: a silence holds the automatic moves on the alert.
   */
  #decide(
    on: Decided,
    suspensions: readonly Suspension[],
    actionsLastHour: number,
    asked: Pick<DecisionContext, 'requested' | 'silenced'>,
  ) {
    const { policy, alert, target, life, now } = on;
    const { settings } = this.p;
    const history = this.#acrossClockStep(this.p.rs.history(policy.config.name, policy.action.name, target, life), now);
    const suspension = suspensionCovering(suspensions, policy.config.name, environmentOf(alert.labels));
    const decision = decidePolicy(policy, alert, history, {
      enabled: settings.enabled,
      suspended: suspension?.scope.kind ?? null,
      actionsLastHour,
      maxActionsPerHour: settings.max_actions_per_hour,
      now,
      ...asked,
    });
    return { decision, history };
  }

  /** Attempts planned in the last hour: one planned more than an hour ahead, before the clock went back, is not. */
  #actionsLastHour(now: number): number {
    return this.p.rs.actionsSince(now - HOUR_MS, latestWaitEnd(now, HOUR_MS));
  }

  /**
   * A record's backoff that ends further ahead than any backoff is set for (a policy's, a Retry-After
   * of at most an hour) was set before the clock went back: over, or it would last the step too.
   */
  #acrossClockStep(history: RecordHistory, now: number): RecordHistory {
    const longest = Math.max(MAX_ASKED_WAIT_MS, ...this.p.policies.map((p) => p.config.backoff));
    const over = history.nextAllowedAt !== null && clockWentBack(history.nextAllowedAt, now, longest);
    return over ? { ...history, nextAllowedAt: null } : history;
  }

  /** The key of an attempt on a decided record, with a key number (taken, or only peeked at by a dry run). */
  #keyOf(on: Decided, attempt: number, number: number): string {
    return idempotencyKey({
      installation: this.#installation,
      number,
      policy: on.policy.config.name,
      ...on.target,
      attempt,
    });
  }

  /** Records the attempt (its key and body) and its audit row. */
  #plan(on: Decided, attempt: number, key: string, body: Record<string, unknown>, asker?: string): void {
    const { policy, alert, target, life, now } = on;
    const name = policy.config.name;
    this.p.rs.insertAttempt({
      policy: name,
      action: policy.action.name,
      ...target,
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
    this.p.rs.clearLastSkip(name, target);
    this.p.audit.acted(on, { attempt, key, body }, asker);
    this.p.log.info(
      {
        policy: name,
        action: policy.action.name,
        record: `${target.recordType}#${target.recordId}`,
        key,
        attempt,
        ...(asker === undefined ? {} : { asker }),
      },
      asker === undefined ? 'remediation planned' : 'remediation planned on request',
    );
  }

  /**
   * Writes a skip (or dry-run) audit row when its reason, the alert life or, for a hold, the silence
   * holding it changed; true when written.
   */
  #recordSkip(on: Decided, skip: Skip): boolean {
    const { policy, target, life, now } = on;
    const reason = skip.reason;
    const name = policy.config.name;
    const held = skip.reason === 'silenced' ? skip.silence : undefined;
    // Remembered with the silence's id: a hold is said once per alert life and silence.
    const remembered = held ? `${reason} ${held.id}` : reason;
    const last = this.p.rs.lastSkip(name, target);
    if (last && last.life === life && last.reason === remembered) return false;
    this.p.rs.setLastSkip(name, target, life, remembered, now);
    if (skip.reason === 'dry_run') this.p.audit.dryRun(on, skip);
    else if (held) this.p.audit.held(on, held);
    else this.p.audit.skipped(on, skip.reason);
    this.p.log.info(
      {
        policy: name,
        record: `${target.recordType}#${target.recordId}`,
        reason,
        ...(held ? { silence: held.id } : {}),
      },
      reason === 'dry_run' ? 'remediation dry run' : 'remediation skipped',
    );
    return true;
  }
}

/**
 * A decision not to act now: a skip (with the silence muting the alert, which a `silenced` one
 * names), or a dry run with the key and body it would send.
 */
type Skip =
  | { reason: SkipReason; silence?: Silence | undefined }
  | { reason: 'dry_run'; key: string; body: Record<string, unknown> };

/** One policy's decision on one alert's record, in one cycle. */
interface Decided extends AuditedDecision {
  /** The alert's life (when it last fired), which skips and stops are remembered by. */
  life: number;
}

/** A policy's decision on an alert's record at `now`, in the alert's current life. */
function decided(policy: CompiledPolicy, alert: AlertRow, target: ActionTarget, now: number): Decided {
  return { policy, alert, target, now, life: alert.firedAt ?? alert.firstSeenAt };
}
