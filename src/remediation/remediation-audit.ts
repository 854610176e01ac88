/**
 * The remediation audit (`remediation_audit`, read by `deploy-watchdog actions`): the one place
 * that words and writes its rows, so a decision, an answer, an outcome or a suspension reads the
 * same wherever it was taken. Rows are written inside the caller's transaction, with the change
 * they record. Each decision is also counted in `deploy_watchdog_remediation_actions_total`.
 */
import type { AlertRow } from '../alerts/alert-store.js';
import type { Silence } from '../alerts/silences.js';
import { formatUtc } from '../lib/format-utc.js';
import type { Metrics } from '../lib/metrics.js';
import { oneLine } from '../notify/channels/escape.js';
import type { ActionTarget } from './actions/action.js';
import type { CompiledPolicy, SkipReason } from './policy.js';
import type { AttemptRow, AuditRow, RemediationStore } from './remediation-store.js';
import { environmentOf, suspensionText, type Suspension } from './suspension.js';

/** The outcome label of the metric. */
export type DecisionMetric = 'acted' | 'skipped' | 'dry_run' | 'refused' | 'failed' | 'succeeded' | 'accepted';

/** What a decision row says besides its policy, record and time. */
type DecisionRow = Pick<AuditRow, 'reason' | 'key' | 'detail'> & { decision: 'acted' | 'skipped' | 'dry_run' };

/** The alert a row is about: its fingerprint, and its labels for the environment. */
type AlertOf = Pick<AttemptRow, 'fingerprint' | 'labels'>;

/** One policy's decision on one alert's record, at `now`: what every decision row is about. */
export interface AuditedDecision {
  policy: CompiledPolicy;
  alert: AlertRow;
  target: ActionTarget;
  now: number;
}

/** Writes and words the audit rows of one state file. */
export class RemediationAudit {
  constructor(
    private readonly rs: RemediationStore,
    private readonly metrics: Metrics | undefined,
  ) {}

  /**
   * A policy acted on an alert's record: the attempt planned under `key`, before any request. `asker`:
   * the person who asked for it (`slack:alice (U0123)`), when one did.
   */
  acted(
    on: AuditedDecision,
    planned: { attempt: number; key: string; body: Record<string, unknown> },
    asker?: string,
  ): void {
    this.#decision(on, {
      decision: 'acted',
      reason: `attempt ${planned.attempt} of ${on.policy.config.max_attempts}`,
      key: planned.key,
      detail: `${askedBy(asker)}${JSON.stringify(planned.body)}; alert: ${on.alert.summary}`,
    });
  }

  /** A policy did not act on an alert's record, and why (and who asked, when one did). */
  skipped(on: AuditedDecision, reason: SkipReason, asker?: string): void {
    this.#decision(on, { decision: 'skipped', reason, key: null, detail: `${askedBy(asker)}${on.alert.summary}` });
  }

  /**
   * A silence in force held a policy's automatic move on an alert's record: whose silence, until
   * when, and why ("held: silenced by alice until 2026-11-29T16:00:00Z (ab12cd34): deploy in progress").
   */
  held(on: AuditedDecision, silence: Pick<Silence, 'id' | 'createdBy' | 'endsAt' | 'reason'>): void {
    const { id, createdBy, endsAt, reason } = silence;
    const why = `held: silenced by ${oneLine(createdBy)} until ${formatUtc(endsAt, 'iso')} (${id}): ${oneLine(reason)}`;
    this.#decision(on, { decision: 'skipped', reason: why, key: null, detail: on.alert.summary });
  }

  /** A policy in dry run would have acted: the key and body it would send (and who asked, when one did). */
  dryRun(on: AuditedDecision, would: { key: string; body: Record<string, unknown> }, asker?: string): void {
    const { policy, target } = on;
    this.#decision(on, {
      decision: 'dry_run',
      reason: 'dry_run',
      key: would.key,
      detail: `${askedBy(asker)}would send ${policy.action.name} on ${target.recordType} #${target.recordId} with ${JSON.stringify(would.body)}`,
    });
  }

  /** The service's answer to a send of an attempt; `said` is quoted, its first word is the answer. */
  answered(attempt: AttemptRow, now: number, reason: string, runId: number | null, said: string): void {
    this.rs.audit({
      ...attemptRow(attempt, now),
      decision: 'answered',
      reason,
      answer: said.split(':')[0] ?? said,
      runId,
      detail: said,
    });
  }

  /** How an attempt ended. */
  outcome(attempt: AttemptRow, now: number, o: { outcome: string; reason: string; detail: string }): void {
    this.rs.audit({
      ...attemptRow(attempt, now),
      decision: 'outcome',
      reason: o.reason,
      answer: attempt.answer,
      outcome: o.outcome,
      detail: o.detail,
    });
  }

  /** A refusal of an attempt suspended its policy, in every environment or in the attempt's. */
  suspended(attempt: AttemptRow, now: number, s: Suspension): void {
    this.rs.audit({
      ...attemptRow(attempt, now),
      decision: 'suspended',
      reason: `${s.code}: ${suspensionText(s.scope)}`,
      answer: s.code,
      detail: s.message,
    });
  }

  /** A suspension lifted at start. */
  resumed(s: Suspension, now: number): void {
    this.rs.audit({
      at: now,
      policy: s.policy,
      action: s.action,
      environment: s.scope.kind === 'environment' ? s.scope.environment : null,
      decision: 'resumed',
      reason: `lifted at start (restart or config reload): ${suspensionText(s.scope)}`,
      answer: s.code,
      detail: `suspended since ${new Date(s.at).toISOString()}: ${s.message}`,
    });
  }

  /** Counts one decision of a policy's action in the metrics. */
  count(policy: string, action: string, outcome: DecisionMetric): void {
    this.metrics?.remediation.inc({ policy, action, outcome });
  }

  /** A row of a policy's decision on an alert's record, before any attempt was sent; counted in the metric. */
  #decision({ policy, alert, target, now }: AuditedDecision, row: DecisionRow): void {
    this.rs.audit({ ...rowAbout(now, policy.config.name, policy.action.name, target, alert), ...row });
    this.count(policy.config.name, policy.action.name, row.decision);
  }
}

/** The head of a row's detail naming who asked for the decision, if a person did. */
function askedBy(asker: string | undefined): string {
  return asker === undefined ? '' : `asked by ${asker}; `;
}

/** The part of a row that says what it is about: a policy's action on an alert's record, at `at`. */
function rowAbout(at: number, policy: string, action: string, target: ActionTarget, about: AlertOf) {
  const { recordType, recordId } = target;
  const { fingerprint, labels } = about;
  return { at, policy, action, recordType, recordId, fingerprint, environment: environmentOf(labels) };
}

/** The part of an attempt's row that says whose it is: its policy, record and key. */
function attemptRow(attempt: AttemptRow, now: number) {
  return { ...rowAbout(now, attempt.policy, attempt.action, attempt, attempt), key: attempt.key, runId: attempt.runId };
}
