/**
 * What to do with the answer to a change, in two pure steps, so the answer table of the reference
 * (§7) reads as a table and is tested as one: {@link handleResult} / {@link handleFailure} name the
 * handling of an answer, and {@link answerStep} says what that handling writes (the attempt's
 * update, the audit row, how the attempt ends and what the channels are told, a suspension, what
 * follows). The sender only carries the step out.
 *
 * The rule behind it: a NEW key is only ever used when the service has said no change was made
 * under the old one (a refusal). When the answer is unknown (no answer, a 5xx, an answer we could
 * not read, a key still in flight) the SAME key is sent again, which can at worst replay the first
 * answer. `idempotency_key_reused` means an earlier request with this key was sent (the reference
 * answers any reuse so, §7.3): what it did is verified with reads, and no fresh key is ever sent.
 */
import { ApiError, ApiResponseError, ApiTransportError, ApiUsageError } from '../api/errors.js';
import type { ChangeResult } from '../api/schemas.js';
import type { AttemptOutcome } from './outcome-notice.js';
import { STOP_OUTCOMES, type AttemptUpdate } from './remediation-store.js';
import type { SuspendReach } from './suspension.js';

/** How one answer is handled. */
export type ChangeHandling =
  /** The change was taken (`started`) or joined a run under way (`already_running`): follow the run. */
  | { kind: 'follow'; answer: ChangeResult['state']; runId: number | null; backupId?: number }
  /** The earlier request of this key was taken: find its run with reads and follow it. */
  | { kind: 'verify_reused' }
  /** Unknown whether it was taken: send the same key and body again later. */
  | { kind: 'resend'; reason: ResendReason; retryAfterMs?: number }
  /** Refused, nothing changed, and it may work later: close this attempt; a later one may follow after the backoff. */
  | { kind: 'refused_later'; code: string; retryAfterMs?: number }
  /** The service will retry the run by itself (`retry_coming`): leave it to that. */
  | { kind: 'wait_auto_retry'; code: 'retry_coming' }
  /** This record cannot be changed this way (`not_retryable`, `not_found`): stop on it and say so. */
  | { kind: 'stop'; code: string }
  /** Refused for a reason only a person can fix: suspend the policy (or its environment) and raise one alert. */
  | { kind: 'suspend'; code: string; reach: SuspendReach }
  /** Refused as a bad request (a bug or a service that changed): close; a later attempt may follow. */
  | { kind: 'failed'; code: string };

/** Why the same key is sent again. */
export type ResendReason = 'request_in_progress' | 'no_answer' | 'server_error' | 'unreadable_answer';

/**
 * Refusals that only a person can lift, and how far each reaches (reference §4, §5, §7). The
 * policy is suspended there and one alert raised. Only `access_denied` and `function_not_allowed`
 * are graded by environment: nothing in the reference narrows the others below the token or the
 * account.
 */
export const SUSPEND_REACH: ReadonlyMap<string, SuspendReach> = new Map<string, SuspendReach>([
  // §5.4: "a token holds a change function only for the environments that its user's role may
  // change", and §5.5 answers such a denial with access_denied. The same token may well change the
  // policy's other environments: pause this one only.
  ['access_denied', 'environment'],
  // §5.5: a function the token does not hold; and by §5.4 it holds a change function only in the
  // environments its role may change, so this too may be one environment's refusal. Paused there
  // only: a token without the function anywhere pauses each environment as it is refused there,
  // rather than one production refusal stopping the policy in staging, where it may act.
  ['function_not_allowed', 'environment'],
  // Change set W: writes are off for the token's account, whatever the environment.
  ['writes_disabled', 'policy'],
  // Change set W: the plan lacks the function; a plan is the account's, not an environment's.
  ['plan_required', 'policy'],
  // Base set B, §5.5: a missing or bad token fails every call; it will not fix itself.
  ['invalid_token', 'policy'],
  // Base set B: the API is off for the account.
  ['api_not_available', 'policy'],
]);

/** Refusals that say "not now": nothing was changed, trying again later is right. */
const LATER_CODES: ReadonlySet<string> = new Set([
  'in_progress',
  'locked',
  'rate_limited',
  'not_deployed',
  'upgrade_standby',
]);

/** Handling of a successful change answer. */
export function handleResult(result: ChangeResult): ChangeHandling {
  // The backup a backup names is read back once its run succeeded (`backup-readback.ts`).
  const backup = result.backup_id === null ? {} : { backupId: result.backup_id };
  return { kind: 'follow', answer: result.state, runId: result.run_id, ...backup };
}

/** Handling of a failed change call. */
export function handleFailure(err: unknown): ChangeHandling {
  if (err instanceof ApiError) {
    const code = err.code;
    const after = err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs };
    if (code === 'idempotency_key_reused') return { kind: 'verify_reused' };
    // The first request of this key is still being handled: its answer will be replayed.
    if (code === 'request_in_progress') return { kind: 'resend', reason: 'request_in_progress', ...after };
    if (code === 'retry_coming') return { kind: 'wait_auto_retry', code };
    const reach = SUSPEND_REACH.get(code);
    if (reach) return { kind: 'suspend', code, reach };
    if ((STOP_OUTCOMES as readonly string[]).includes(code)) return { kind: 'stop', code };
    if (LATER_CODES.has(code)) return { kind: 'refused_later', code, ...after };
    // A 5xx answer is not a refusal: the service may or may not have applied the change.
    if (err.status >= 500) return { kind: 'resend', reason: 'server_error', ...after };
    return { kind: 'failed', code };
  }
  if (err instanceof ApiTransportError) return { kind: 'resend', reason: 'no_answer' };
  if (err instanceof ApiResponseError) {
    // An answer we could not read: on a 2xx the change may well have been made; on an error
    // status (a proxy page) we cannot tell either. The same key finds out.
    return {
      kind: 'resend',
      reason: err.status >= 200 && err.status < 300 ? 'unreadable_answer' : 'server_error',
      ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }),
    };
  }
  if (err instanceof ApiUsageError) return { kind: 'failed', code: 'usage_error' };
  throw err;
}

/** First wait before the same key is sent again after an unknown answer; doubles per send. */
export const RESEND_DELAY_MS = 60_000;
/** Longest wait between two sends of the same key. */
export const MAX_RESEND_DELAY_MS = 15 * 60_000;
/**
 * Longest wait a Retry-After is taken for: a hostile or broken answer (a year) would otherwise keep
 * the record's attempt open, and its remediation stopped, for as long as it says.
 */
export const MAX_ASKED_WAIT_MS = 60 * 60_000;

/** The wait the service asked for, at most {@link MAX_ASKED_WAIT_MS}; 0 when it asked none. */
const asked = (retryAfterMs: number | undefined): number => Math.min(retryAfterMs ?? 0, MAX_ASKED_WAIT_MS);

/** The facts an answer is carried out with, besides its handling. */
export interface AnswerFacts {
  now: number;
  /** What the service said (`started`, `locked: app is locked`), as the audit and notices quote it. */
  said: string;
  /** Sends of the attempt's key so far, this one included. */
  sendCount: number;
  /** `remediation.follow_timeout`. */
  followTimeoutMs: number;
  /** The policy's `backoff`: how long after an attempt ends the next may come. */
  backoffMs: number;
}

/** How an attempt ends on an answer. */
export type AnswerEnd =
  /**
   * Closed without a notice: refused with nothing changed (a later attempt may follow), or
   * suspended (the suspension raises its own alert). Counted in the metrics as `metric`.
   */
  | { kind: 'closed'; outcome: string; reason: string; nextAllowedAt: number; metric: 'refused' | 'failed' }
  /** Closed, and the alert's channels are told the outcome. */
  | { kind: 'told'; outcome: AttemptOutcome; counted: boolean; nextAllowedAt: number | null };

/** What carrying out one answer writes, in one transaction, and what follows it. */
export interface AnswerStep {
  /** The `answered` audit row: why, and the run it names. */
  audit: { reason: string; runId: number | null };
  /** Changes to the attempt (none: `{}`). */
  update: AttemptUpdate;
  /** How the attempt ends now; null: it goes on (followed, or sent again later). */
  end: AnswerEnd | null;
  /** A suspension of the policy besides: the refusal's code and how far it reaches. */
  suspend: { code: string; reach: SuspendReach } | null;
  /** Read the run at once: the earlier request of this key was taken, and its run must be found. */
  pollNow: boolean;
}

type Handling<K extends ChangeHandling['kind']> = Extract<ChangeHandling, { kind: K }>;

/** The answer table: each handling's step. */
const ANSWER_STEPS: { readonly [K in ChangeHandling['kind']]: (h: Handling<K>, f: AnswerFacts) => AnswerStep } = {
  follow: (h, f) =>
    step(h.answer === 'already_running' ? 'joined the run under way' : 'change taken', {
      runId: h.runId,
      update: { ...following(f, h.answer, h.runId), ...(h.backupId === undefined ? {} : { backupId: h.backupId }) },
      // Taken without a run to follow: the change is all there is.
      end: h.runId === null ? told(f, { kind: 'no_run' }, true) : null,
    }),
  // The earlier request with this key was taken. Never a fresh key: find its run and follow it.
  verify_reused: (_h, f) =>
    step('earlier request with this key was taken; verifying with reads', {
      update: following(f, 'idempotency_key_reused', null),
      pollNow: true,
    }),
  resend: (h, f) => {
    const doubled = Math.min(MAX_RESEND_DELAY_MS, RESEND_DELAY_MS * 2 ** Math.max(0, f.sendCount - 1));
    return step(`${h.reason}: the same key will be sent again`, {
      update: { nextAt: f.now + Math.max(asked(h.retryAfterMs), doubled) },
    });
  },
  refused_later: (h, f) =>
    refusedNow(h.code, 'refused for now; try again later', f.now + Math.max(f.backoffMs, asked(h.retryAfterMs))),
  wait_auto_retry: (h, f) => refusedNow(h.code, 'the service will retry by itself', f.now + f.backoffMs),
  stop: (h, f) =>
    step('this record cannot be changed this way', {
      end: told(f, { kind: 'stopped', code: h.code, message: f.said }, false, null),
    }),
  // How far it reaches is SUSPEND_REACH's to say, not the step's.
  suspend: (h, f) =>
    step('refused for a reason only a person can fix', {
      end: closed('suspended', h.code, f.now + f.backoffMs, 'failed'),
      suspend: { code: h.code, reach: h.reach },
    }),
  failed: (h, f) =>
    step('refused as a bad request', {
      end: told(f, { kind: 'failed_request', code: h.code, message: f.said }, false),
    }),
};

/** What carrying out an answer's handling writes and what follows. Pure. */
export function answerStep(handling: ChangeHandling, facts: AnswerFacts): AnswerStep {
  const of = ANSWER_STEPS[handling.kind] as (h: ChangeHandling, f: AnswerFacts) => AnswerStep;
  return of(handling, facts);
}

/** A step with the `answered` row's reason and only what `o` names: no update, end, suspension or poll. */
function step(reason: string, o: Partial<Omit<AnswerStep, 'audit'>> & { runId?: number | null } = {}): AnswerStep {
  const { runId = null, ...rest } = o;
  return { audit: { reason, runId }, update: {}, end: null, suspend: null, pollNow: false, ...rest };
}

/** From now on followed: taken (counted), its run polled at once, and until follow_timeout. */
function following(f: AnswerFacts, answer: string, runId: number | null): AttemptUpdate {
  return { status: 'following', counted: true, answer, runId, followUntil: f.now + f.followTimeoutMs, nextAt: f.now };
}

/** An end the channels are told; by default the next attempt may come after the policy's backoff. */
function told(
  f: AnswerFacts,
  outcome: AttemptOutcome,
  counted: boolean,
  nextAllowedAt: number | null = f.now + f.backoffMs,
): AnswerEnd {
  return { kind: 'told', outcome, counted, nextAllowedAt };
}

/**
 * Refused for now: nothing changed under this key, so the attempt closes quietly, not counted
 * against max_attempts; a later attempt (a new key) may come at `nextAllowedAt`.
 */
function refusedNow(code: string, reason: string, nextAllowedAt: number): AnswerStep {
  return step(reason, { end: closed(code, reason, nextAllowedAt, 'refused') });
}

/** An end without a notice: the attempt's outcome word, the audit's reason, the next attempt's time, the metric. */
function closed(outcome: string, reason: string, nextAllowedAt: number, metric: 'refused' | 'failed'): AnswerEnd {
  return { kind: 'closed', outcome, reason, nextAllowedAt, metric };
}
