/**
 * The one small interface every remediation action implements: which open alerts it can act on,
 * what it must not touch, the body it sends, how it sends it, and how it finds the run an earlier
 * request started, and the schema of its policies. Adding an action (apps.restart, say) is one new
 * file here and one line in `registry.ts`; the config's `remediation.policies` and the remediator
 * (keys, audit, answers, following, notices) follow from them.
 */
import type { AlertRow } from '../../alerts/alert-store.js';
import type { ApiClient, ChangeOptions } from '../../api/client.js';
import type { ChangeResult } from '../../api/schemas.js';
import type { z } from 'zod';
import type { PolicyBase } from '../../config/policy-schema.js';

/** The kind of record an action changes; part of the idempotency key and the audit. */
export type RecordType = 'run' | 'app';

/** A record an action could change, found in an open alert. */
export interface ActionTarget {
  recordType: RecordType;
  recordId: number;
}

/** An action-specific reason not to act now, read from what the alert says. */
export type ActionSkipReason = 'run_retrying' | 'run_running_again';

/** The attempt facts an action may use to verify an earlier request. */
export interface AttemptFacts {
  recordId: number;
  /** When the first request of this key was sent (ms, our clock), if known. */
  firstSentAt: number | null;
  plannedAt: number;
  /**
   * When the failure the attempt's alert told of happened, in the service's clock (a failed run's
   * `updated_at`); null or absent: not known.
   */
  toldFailedAt?: number | null;
}

/** The words of an action's notices. */
export interface ActionWords {
  /** The change was made: "Retried automatically". */
  done: string;
  /** It worked: "Retried automatically: succeeded". */
  succeeded: string;
  /** It did not: "Retried automatically: failed" (then " at step X: reason"). */
  failed: string;
  /** The change as a noun: "Automatic retry". */
  noun: string;
  /** A person asking for it now, as a button says it: "Retry now". */
  request: string;
}

/** One change the remediator can make. */
export interface RemediationAction<P extends PolicyBase = PolicyBase> {
  /** The catalogue name of the change, as policies name it. */
  readonly name: P['action'];
  /** The schema of its policies (`policySchema(name, backoff, { its own fields })`). */
  readonly policy: z.ZodType<P>;
  /** The record it changes. */
  readonly recordType: RecordType;
  /**
   * The record of an open alert this action can fix, or null when the alert is not its kind
   * (another check, another sub-problem, no subject id).
   */
  target(alert: AlertRow): ActionTarget | null;
  /**
   * Whether this policy covers an alert the action can fix (its own fields narrowing which: the
   * backup problems, the app states); absent: every one. A policy that does not cover an alert
   * neither acts on it nor offers a button for it. Pure.
   */
  covers?(alert: AlertRow, policy: P): boolean;
  /** A reason not to act on this alert under this policy now, or null; absent: none ever. Pure. */
  precheck?(alert: AlertRow, policy: P): ActionSkipReason | null;
  /** The change body. Stored with the attempt, so a re-send sends exactly this. */
  body(policy: P): Record<string, unknown>;
  /** Sends the change once. Never retried by the client (changes are not). */
  send(
    client: ApiClient,
    recordId: number,
    body: Record<string, unknown>,
    options: ChangeOptions,
  ): Promise<ChangeResult>;
  /**
   * After `idempotency_key_reused` (an earlier request with this key was sent; §7.3 answers so
   * whether or not it was taken): the id of the run that request started, found with reads only,
   * or null when no run shows it was made.
   */
  findStartedRun(client: ApiClient, facts: AttemptFacts, signal?: AbortSignal): Promise<number | null>;
  /** How people read what was done, in notices. */
  readonly words: ActionWords;
  /**
   * Never made by the remediator by itself, whatever a policy says: only when a person asks (a
   * button). Its policy schema refuses `automatic: true` too; this holds even so.
   */
  readonly onRequestOnly?: true;
  /**
   * After its run succeeded, the backup it took is read back by id (`backups.get`) until it settles,
   * for at most this long under the policy (ms), and the outcome says whether it was verified and
   * copied off-site (`backup-readback.ts`). Absent: the run's success is the outcome.
   */
  readBackFor?(policy: P): number;
}

/**
 * The target of an alert of `check` about one record of `recordType`, its subject; null for
 * another check, another kind of record, or a subject without an id.
 */
export function subjectTarget(alert: AlertRow, check: string, recordType: RecordType): ActionTarget | null {
  if (alert.check !== check || alert.subject?.type !== recordType || alert.subject.id === undefined) return null;
  return { recordType, recordId: alert.subject.id };
}
