/**
 * The errors of an API call. Every one extends {@link ApiCallError}, carries the dotted name of the
 * function that failed (`fn`) and renders the same through `message`, `toJSON()` and
 * `util.inspect`. None of them ever holds the token: the client builds them from the answer and
 * the function name only, and scrubs any text it did not write itself (answer excerpts, library
 * error messages) with `Secret.scrub` before it gets here.
 */
import { inspect } from 'node:util';
import type { RecordProblem } from './record-problem.js';
import { ERROR_STATUS } from './schemas.js';

/** The common base: any failure of one call of a function of the API. */
export abstract class ApiCallError extends Error {
  /** Dotted function name, e.g. `runs.list`. */
  readonly fn: string;
  /**
   * How many attempts the call started before giving up, set by the client when it throws (the
   * error of the last attempt is the one thrown). An attempt that ended before sending (the
   * deadline had passed, the rate limit would have held it too long) counts; 0 for usage errors.
   */
  attempts = 0;

  constructor(fn: string, message: string) {
    super(`${fn}: ${message}`);
    this.fn = fn;
  }

  /**
   * The fields of a subclass that `toJSON()` gives after the common ones (static: not logged itself);
   * each subclass types its list as its own keys, so a misspelt field does not compile. A subclass
   * sets its own fields from its constructor's `init` in one `Object.assign`, not one by one (they
   * are `declare`d: TypeScript does not see that assignment, and no initialiser resets them).
   */
  static readonly jsonFields: readonly string[] = [];

  /** The fields that say what went wrong, for logs and JSON (never a header, never the token). */
  toJSON(): Record<string, unknown> {
    const fields = (this.constructor as typeof ApiCallError).jsonFields;
    const own = Object.fromEntries(fields.map((key) => [key, (this as unknown as Record<string, unknown>)[key]]));
    return { name: this.name, fn: this.fn, message: this.message, attempts: this.attempts, ...own };
  }

  /** `util.inspect` shows the JSON fields and the stack, and nothing else of the object. */
  [inspect.custom](): string {
    return `${this.stack ?? this.message}\n${inspect(this.toJSON())}`;
  }
}

/** The service refused the call with an error envelope `{"error": {code, message}}` (reference §7). */
export class ApiError extends ApiCallError {
  override readonly name = 'ApiError';
  static override readonly jsonFields: readonly (keyof ApiError & string)[] = ['code', 'status', 'retryAfterMs'];
  /** The error code of the envelope (an `ErrorCode` of §7, or a code the reference does not list). */
  declare readonly code: string;
  /** HTTP status of the answer. */
  declare readonly status: number;
  /** The service's own message. */
  declare readonly serviceMessage: string;
  /** The wait the service asked for with `Retry-After`, when it sent one. */
  declare readonly retryAfterMs: number | undefined;

  constructor(fn: string, init: { code: string; status: number; message: string; retryAfterMs?: number }) {
    super(fn, `${init.code} (HTTP ${init.status}): ${init.message}`);
    const { message, ...fields } = init;
    Object.assign(this, { ...fields, serviceMessage: message });
  }
}

/** What was wrong with an answer that is not what the function promises. */
export type ResponseProblem = 'not_json' | 'bad_envelope' | 'schema' | 'empty' | 'too_large';

const PROBLEM_TEXT: Record<ResponseProblem, string> = {
  too_large: 'answer too large',
  not_json: 'answer is not JSON',
  bad_envelope: 'answer is JSON but not the expected envelope',
  schema: 'answer does not fit the schema',
  empty: 'answer is empty',
};

/**
 * The answer was not as expected: an HTML error page from a proxy, truncated JSON, a missing
 * envelope, or a field of the wrong type. `detail` names what was wrong: a short excerpt of the
 * body, or the zod issues with their paths (and the id of the list item they are in).
 */
export class ApiResponseError extends ApiCallError {
  override readonly name = 'ApiResponseError';
  static override readonly jsonFields: readonly (keyof ApiResponseError & string)[] = [
    'status',
    'problem',
    'detail',
    'issuePaths',
  ];
  declare readonly status: number;
  declare readonly problem: ResponseProblem;
  /** A short, scrubbed excerpt of the body, or the schema issues, one per `; `. */
  declare readonly detail: string;
  /** For `schema`: the paths of the failing fields, e.g. `items[3].state`. */
  declare readonly issuePaths: readonly string[];
  /** The wait the service asked for with `Retry-After`, when it sent one. */
  declare readonly retryAfterMs: number | undefined;
  /**
   * For `schema` on a read of one record: what is wrong with that record (`quarantine.ts`), so a
   * collector can set it aside instead of failing its read.
   */
  declare readonly record: RecordProblem | undefined;

  constructor(
    fn: string,
    init: Pick<ApiResponseError, 'status' | 'problem' | 'detail'> &
      Partial<Pick<ApiResponseError, 'issuePaths' | 'retryAfterMs' | 'record'>>,
  ) {
    super(fn, `${PROBLEM_TEXT[init.problem]} (HTTP ${init.status}): ${init.detail}`);
    Object.assign(this, { ...init, issuePaths: init.issuePaths ?? [] });
  }
}

const TRANSPORT_REASONS = ['timeout', 'connection', 'deadline', 'aborted'] as const;
/** Why no answer arrived. */
export type TransportReason = (typeof TRANSPORT_REASONS)[number];

/**
 * No answer: the request timed out, the connection failed, the caller's deadline for the whole
 * call passed, or the caller aborted it.
 */
export class ApiTransportError extends ApiCallError {
  override readonly name = 'ApiTransportError';
  static override readonly jsonFields: readonly (keyof ApiTransportError & string)[] = ['reason'];

  readonly reason: TransportReason;

  constructor(fn: string, reason: TransportReason, detail: string) {
    super(fn, `${reason}: ${detail}`);
    this.reason = reason;
  }
}

/** How a list was seen to shift while it was paged. */
export type PaginationShift = 'total_changed' | 'id_repeated' | 'count_mismatch' | 'short_page';

/**
 * A list kept changing while it was paged, walk after walk: the client cannot hand back a list it
 * knows to be complete, and refuses to hand back a partial one.
 */
export class ApiPaginationError extends ApiCallError {
  override readonly name = 'ApiPaginationError';
  static override readonly jsonFields: readonly (keyof ApiPaginationError & string)[] = ['shift', 'walks'];
  /** The shift seen on the last walk. */
  declare readonly shift: PaginationShift;
  /** How many walks were made. */
  declare readonly walks: number;

  /**
   * `same`: every walk saw the very same thing (a `total` that is off by the same count each time):
   * said as the service's list not adding up, which waiting does not cure, not as a busy list.
   */
  constructor(
    fn: string,
    { detail, same, ...init }: Pick<ApiPaginationError, 'shift' | 'walks'> & { detail: string; same?: boolean },
  ) {
    super(
      fn,
      same
        ? `the list does not add up, the same on all ${init.walks} walks (the service's total or pages are off, not a list that changed): ${init.shift}: ${detail}`
        : `list kept changing while paged (${init.walks} walk(s)); last: ${init.shift}: ${detail}`,
    );
    Object.assign(this, init);
  }
}

/**
 * A list walk read more items than the client allows (`api.max_list_items`), or a list says it
 * holds more than that and must be read whole: a service whose lists never end (a `total` of a
 * billion, fresh ids on every page) would otherwise keep the walk, and its memory, growing.
 */
export class ApiListTooLongError extends ApiCallError {
  override readonly name = 'ApiListTooLongError';
  static override readonly jsonFields: readonly (keyof ApiListTooLongError & string)[] = ['maxItems', 'total'];
  /** The bound that was passed. */
  declare readonly maxItems: number;
  /** The list's own `total`. */
  declare readonly total: number;

  constructor(fn: string, { read, ...init }: Pick<ApiListTooLongError, 'maxItems' | 'total'> & { read: number }) {
    const found =
      read > init.maxItems
        ? `more than ${init.maxItems} items read in one walk (total says ${init.total})`
        : `total says ${init.total}, more than ${init.maxItems}`;
    super(fn, `list too long: ${found}; raise api.max_list_items if the service really holds that many`);
    Object.assign(this, init);
  }
}

/**
 * The caller used the client wrongly (a programming error): a change without an idempotency key,
 * a parameter the function does not have, a value of the wrong type, a missing required one.
 * Thrown before anything is sent.
 */
export class ApiUsageError extends ApiCallError {
  override readonly name = 'ApiUsageError';
}

/** Every code a failed call can be counted under: §7's, an answer's problems and the transport's. */
const COUNTED_CODES: ReadonlySet<string> = new Set([
  ...Object.keys(ERROR_STATUS),
  ...Object.keys(PROBLEM_TEXT),
  ...TRANSPORT_REASONS,
]);

/** What a failed attempt is counted under: a refusal's code, an answer's problem, the transport's reason. */
export function failureCode(err: unknown): string | undefined {
  if (err instanceof ApiError) return err.code;
  if (err instanceof ApiResponseError) return err.problem;
  return err instanceof ApiTransportError ? err.reason : undefined;
}

/**
 * The error code a metric label may carry: a code the daemon knows (reference §7, or one of its
 * own for an answer or a transport that failed), or `other`. The service chooses its codes, and a
 * label value from outside would let it grow one time series per new code without bound.
 */
export function countedErrorCode(code: string): string {
  return COUNTED_CODES.has(code) ? code : 'other';
}

/** An HTTP status as a metric label: the status when it is one (100 to 599), else `other`. */
export function countedStatus(status: number | undefined): string {
  if (status === undefined) return 'error';
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : 'other';
}
