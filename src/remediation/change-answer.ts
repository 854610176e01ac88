/**
 * What to do with the answer to a change, as one pure function with named handlings, so the
 * answer table of the reference (§7) reads as a table and is tested as one.
 *
 * The rule behind it: a NEW key is only ever used when the service has said no change was made
 * under the old one (a refusal). When the answer is unknown (no answer, a 5xx, an answer we could
 * not read, a key still in flight) the SAME key is sent again, which can at worst replay the first
 * answer. `idempotency_key_reused` means the earlier request with this key was taken: it is
 * verified with reads, and no fresh key is ever sent for it.
 */
import { ApiError, ApiResponseError, ApiTransportError, ApiUsageError } from '../api/errors.js';
import type { ChangeResult } from '../api/schemas.js';

/** How one answer is handled. */
export type ChangeHandling =
  /** The change was taken (`started`) or joined a run under way (`already_running`): follow the run. */
  | { kind: 'follow'; answer: ChangeResult['state']; runId: number | null }
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

/** How far a refusal that only a person can fix reaches: the whole policy, or its app's environment. */
export type SuspendReach = 'policy' | 'environment';

/**
 * Refusals that only a person can lift, and how far each reaches (reference §4, §5, §7). The
 * policy is suspended there and one alert raised. Only `access_denied` is graded by environment:
 * nothing in the reference narrows the others below the token or the account.
 */
export const SUSPEND_REACH: ReadonlyMap<string, SuspendReach> = new Map<string, SuspendReach>([
  // §5.4: "a token holds a change function only for the environments that its user's role may
  // change", and §5.5 answers such a denial with access_denied. The same token may well change the
  // policy's other environments: pause this one only.
  ['access_denied', 'environment'],
  // §5.5: the token does not hold the function at all, in any environment.
  ['function_not_allowed', 'policy'],
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

/** Refusals that say "never, for this record". */
const STOP_CODES: ReadonlySet<string> = new Set(['not_retryable', 'not_found']);

/** Handling of a successful change answer. */
export function handleResult(result: ChangeResult): ChangeHandling {
  return { kind: 'follow', answer: result.state, runId: result.run_id };
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
    if (STOP_CODES.has(code)) return { kind: 'stop', code };
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
