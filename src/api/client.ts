/**
 * The client of the Deployment Management Service API v1: every function of the catalogue
 * (`functions.ts`), grouped by resource, over one keep-alive undici dispatcher.
 *
 * Every call goes through {@link ApiClient.call}: parameters checked against the catalogue, one
 * token from the rate limiter per attempt, the request with a per-attempt timeout and the caller's
 * deadline, the answer unwrapped from `{"data": …}` and parsed with the function's zod schema,
 * failures turned into the errors of `errors.ts`, and reads retried by the {@link RetryPolicy}.
 *
 * Lists that do not fit their schema: with `CallOptions.quarantine` (every collector's read), a
 * list answer is read record by record, and an item that does not fit is set aside there with its
 * kind, id and reason (`quarantine.ts`): never silently dropped, since a dropped record would hide
 * the very thing that may be wrong; its alerts are held and the admin told. Without one, one item
 * that does not fit fails the whole answer with an {@link ApiResponseError} (`problem: 'schema'`)
 * whose detail names the item (its index and id) and the field. A read of one record that does not
 * fit fails with the record's problem (`ApiResponseError.record`), for its caller to set aside.
 *
 * The token is read (`reveal()`) in one place: the Authorization header. It is never logged, never
 * put in an error, and any text the client did not write itself is scrubbed of it.
 */
import type { ExtraValues } from './extra-values.js';
import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from '../lib/undici-core.js';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { systemClock } from '../lib/clock.js';
import { Secret } from '../lib/secret.js';
import { silentLogger } from '../lib/logger.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import { getOrAdd } from '../lib/get-or-add.js';
import {
  FUNCTIONS,
  type AnswerOf,
  type BodyOf,
  type FunctionName,
  type FunctionSpec,
  type ParamSpec,
  type QueryOf,
} from './functions.js';
import type { z } from 'zod';
import { errorEnvelopeSchema, pageSchema, type Page } from './schemas.js';
import {
  ApiCallError,
  ApiError,
  ApiResponseError,
  ApiTransportError,
  ApiUsageError,
  failureCode,
  type TransportReason,
} from './errors.js';
import { jsonValueBound, UNCOUNTED_BYTES } from './answer-bounds.js';
import { RateLimiter } from './rate-limiter.js';
import { parseRetryAfter } from '../lib/retry-after.js';
import { RetryPolicy, type RetryPolicyOptions } from './retry-policy.js';
import { paginate, pageStream, type PaginateOptions, type QuarantinedPage, type WalkedPage } from './paginate.js';
import {
  describePath,
  elementSchemaOf,
  pageEnvelopeSchema,
  compiledSchema,
  parseRecord,
  quarantined,
  recordKindOf,
  type QuarantinedRecord,
  type QuarantineSink,
} from './quarantine.js';
import { AnswerTooLarge, startExchange, type ExchangeAnswer } from './exchange.js';
import { parsePage, type ParsedPage, type PassOver } from './parse-page.js';
import { LargeAnswerGate } from './large-answer-gate.js';

/** One HTTP attempt, as reported to the {@link ApiObserver} (the metrics hook). */
export interface ApiAttempt {
  fn: string;
  /** HTTP status, when an answer arrived. */
  status?: number;
  /** The refusal's code, the response problem (`not_json`…) or the transport reason (`timeout`…). */
  errorCode?: string;
  durationMs: number;
  /** 1 for the first attempt of a call. */
  attempt: number;
  /** Size of the answer body. */
  bytes?: number;
}

/** Called after every HTTP attempt; must not throw (a throw is logged and ignored). */
export type ApiObserver = (attempt: ApiAttempt) => void;

/** Options of {@link createApiClient}. */
export interface ApiClientOptions {
  /** `{base_url}` of the reference; the client appends `/api/v1`. */
  baseUrl: string;
  token: Secret;
  /**
   * The config's other secrets (webhook URLs, bot tokens, the SMTP password): scrubbed from every
   * answer as the token is, so a service that echoes one shows it nowhere. Default: none.
   */
  otherSecrets?: readonly Secret[];
  /**
   * Client-side rate limit; default 10. `Infinity` (`api.requests_per_second: off`) turns the token
   * bucket off: requests go as fast as `concurrency` and the service allow, but a 429's
   * `Retry-After` still holds every request back.
   */
  requestsPerSecond?: number;
  /** Per request (one attempt); default 30 000. */
  timeoutMs?: number;
  /** Retries of a read; default 3. */
  maxRetries?: number;
  /** Backoff tunables (tests pass small delays and a seeded random). */
  retry?: Omit<RetryPolicyOptions, 'maxRetries'>;
  /**
   * `limit` asked for by list walks; default 200. The reference states no maximum: a service that
   * refuses it with `invalid_parameter` is asked again with smaller ones down to the reference's own
   * default of 50, and the size it takes is kept for that function (see {@link PAGE_SIZE_STEPS}).
   */
  pageSize?: number;
  /** The largest answer body taken, in bytes; default 8 MiB. Past it: `too_large`. */
  maxAnswerBytes?: number;
  /**
   * The most JSON values (objects, arrays, members) an answer over 1 MiB may hold; default 250,000.
   * Past it: `too_large` (see `answer-bounds.ts`).
   */
  maxAnswerValues?: number;
  /** The most items one list walk reads; default 200,000. Past it: {@link ApiListTooLongError}. */
  maxListItems?: number;
  /**
   * Values beyond those the reference states, each read as the stated value it means
   * (`api.extra_values`, `extra-values.ts`); default none: a record with one is set aside.
   */
  extraValues?: ExtraValues;
  /**
   * Timestamps without a zone (`api.zoneless_timestamps`): `refuse` (default) sets their record
   * aside, `utc` reads them as UTC.
   */
  zonelessTimestamps?: 'refuse' | 'utc';
  /**
   * List walks ask for the next page while the current one is on its way (two requests in flight
   * per walk); default false. See `PaginateOptions.readAhead`.
   */
  readAhead?: boolean;
  /** Default: a keep-alive Agent that the client owns and closes. */
  dispatcher?: Dispatcher;
  clock?: Clock;
  logger?: Logger;
  observer?: ApiObserver;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Epoch ms (clock time) by which the whole call, retries included, must be over. */
  deadline?: number;
  /** Per request; overrides the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Required for changes (a change without one throws before sending); ignored for reads. */
  idempotencyKey?: string;
  /**
   * Told about the answer that is returned: its status, and whether the service marked it as a
   * replay (`Idempotent-Replayed: true`: an answer to an earlier request with the same idempotency
   * key, given again, so the change was made once, then).
   */
  onAnswer?: (answer: { status: number; replayed: boolean }) => void;
  /**
   * A `pick` of the function's answer schema (of its item schema, for a list): only those fields
   * are checked and kept, the rest of the answer is garbage at once. For a reader that needs a few
   * fields of many records (`src/collectors/views.ts`); `get`, `list`, `listAll` and `pages` type
   * their answer by it.
   */
  view?: z.ZodType;
  /**
   * Where a list answer's records that do not fit are set aside (`quarantine.ts`): each item is
   * then parsed alone, and one that does not fit (an unreadable timestamp or type, a value beyond
   * the stated ones) is handed here, with its kind, id and reason, while the others are kept. Only
   * the envelope or the page failing fails the call. Absent: one item that does not fit fails the
   * whole answer (ApiResponseError `schema`). For a walk, what it sets aside is handed on once the
   * walk is complete.
   */
  quarantine?: QuarantineSink;
  /**
   * For a walk's pages (`pages`): the records the reader drops unread. They are counted and their
   * ids checked by the walk, but not parsed or handed on (`parse-page.ts`). A page that cannot be
   * parsed item by item hands every record on. For `pages` only: `list` would drop the records
   * unseen, and `listAll`'s `until` would not see them (an item passed over is never judged).
   */
  passOver?: PassOver;
}

/** Options of a change: the idempotency key is required. */
export type ChangeOptions = CallOptions & { idempotencyKey: string };

/**
 * Options of `listAll`: a walk's early stop (`until`) and the items it keeps (`keep`), as
 * `PaginateOptions` says them; `readAhead` overrides the client's for this walk: false for walks
 * that already run `api.concurrency` at a time, which would otherwise have twice that in flight.
 */
export type ListAllOptions<T> = CallOptions & Pick<PaginateOptions<T>, 'until' | 'keep' | 'readAhead'>;

/** The arguments of {@link ApiClient.call}: the path id, query and body of the function. */
export interface CallArgs<N extends FunctionName> {
  id?: number;
  query?: QueryOf<N>;
  body?: BodyOf<N>;
}

type ItemOf<N extends FunctionName> = AnswerOf<N> extends { items: (infer T)[]; total: number } ? T : never;
/** The query of a list walk: the list's query without `limit`/`offset`, which the walk sets. */
export type WalkQuery<N extends FunctionName> = Omit<QueryOf<N>, 'limit' | 'offset'>;

/** `list`, `listAll` and `pages` of a paged function. */
export interface ListMethods<N extends FunctionName> {
  /** One page, as the service answers it. */
  list<S extends z.ZodType>(query: QueryOf<N> | undefined, opts: CallOptions & { view: S }): Promise<Page<z.output<S>>>;
  list(query?: QueryOf<N>, opts?: CallOptions): Promise<Page<ItemOf<N>>>;
  /** The complete list (or the part before `until`), or a throw: never a partial list. */
  listAll<S extends z.ZodType<{ id: number }>>(
    query: WalkQuery<N> | undefined,
    opts: ListAllOptions<z.output<S>> & { view: S },
  ): Promise<z.output<S>[]>;
  listAll(query?: WalkQuery<N>, opts?: ListAllOptions<ItemOf<N>>): Promise<ItemOf<N>[]>;
  /** The pages of one walk, every page handed on; a shift ends it with ApiPaginationError. */
  pages<S extends z.ZodType<{ id: number }>>(
    query: WalkQuery<N> | undefined,
    opts: CallOptions & { view: S },
  ): AsyncIterable<WalkedPage<z.output<S>>>;
  pages(query?: WalkQuery<N>, opts?: CallOptions): AsyncIterable<WalkedPage<ItemOf<N>>>;
}

type GetMethod<N extends FunctionName> = {
  get<S extends z.ZodType>(id: number, opts: CallOptions & { view: S }): Promise<z.output<S>>;
  get(id: number, opts?: CallOptions): Promise<AnswerOf<N>>;
};

/**
 * The API client: every function of the catalogue, by resource, as {@link createApiClient} builds
 * it (its type is that of what it returns: the methods are said once, there).
 */
export type ApiClient = ReturnType<typeof createApiClient>;

const API_PREFIX = '/api/v1';
const EXCERPT_CHARS = 200;
const MIB = 1024 * 1024;

/**
 * The page sizes a list walk steps down through when the service refuses its `limit` with
 * `invalid_parameter`, ending at the reference's default (50), which every service must take.
 */
export const PAGE_SIZE_STEPS: readonly number[] = [1000, 500, 200, 100, 50];

/**
 * The lists the reference gives newest first (§4), where new records arrive at the head while a
 * walk reads: their walks let such arrivals pass (`PaginateOptions.newestFirst`).
 */
const NEWEST_FIRST: ReadonlySet<FunctionName> = new Set(['runs.list', 'backups.list', 'restore_points.list']);

/** The {@link ApiResponseError} of the answer being read: what is wrong with it, and where. */
type FailAnswer = (
  problem: ApiResponseError['problem'],
  detail: string,
  where?: Partial<Pick<ApiResponseError, 'issuePaths' | 'record'>>,
) => ApiResponseError;

/** The page schema of each list view (`CallOptions.view`), built once. */
const PAGE_OF_VIEW = new WeakMap<z.ZodType, z.ZodType>();
function pageOf(view: z.ZodType): z.ZodType {
  return getOrAdd(PAGE_OF_VIEW, view, () => pageSchema(view));
}

/** Builds an {@link ApiClient}. */
export function createApiClient(options: ApiClientOptions) {
  const baseUrl = new URL(options.baseUrl);
  const origin = baseUrl.origin;
  const root = `${baseUrl.pathname.replace(/\/+$/, '')}${API_PREFIX}`;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  // A service down for days fails every retry of every cycle: its retries are said once per `log.repeat_every`.
  const retries = new RepeatedLog(logger, { clock });
  const token = options.token;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pageSize = options.pageSize ?? 200;
  const maxAnswerBytes = options.maxAnswerBytes ?? 8 * MIB;
  const maxAnswerValues = options.maxAnswerValues ?? 250_000;
  const maxListItems = options.maxListItems ?? 200_000;
  const zonelessAsUtc = options.zonelessTimestamps === 'utc';
  /** One large answer read and parsed at a time (see `large-answer-gate.ts`). */
  const largeAnswers = new LargeAnswerGate();
  /** The page size each list function was found to take, when smaller than `pageSize`. */
  const learnedPageSize = new Map<string, number>();
  const ownsDispatcher = options.dispatcher === undefined;
  // Keep-alive: a collector makes many small requests to one origin in a row.
  const dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, connections: 8 });
  const limiter = new RateLimiter({ requestsPerSecond: options.requestsPerSecond ?? 10, clock });
  const policy = new RetryPolicy({ ...options.retry, maxRetries: options.maxRetries ?? 3 });
  // What an answer is scrubbed of: the token and every other secret of the config.
  const allSecrets = [token, ...(options.otherSecrets ?? [])];
  /** `text` with every secret replaced by `<secret>`. */
  const scrub = Secret.scrubber(allSecrets);
  const secrets = allSecrets.map((s) => s.reveal()).filter((v) => v.length >= 4);
  // The JSON escapes that could spell a secret without the text holding it as is: `\uXXXX` for
  // any character, and the short escape of each character of one that has one (`\/`, `\"`, `\\`).
  const escapesOfSecret = [
    '\\u',
    ...['/', '"', '\\'].filter((c) => secrets.some((v) => v.includes(c))).map((c) => `\\${c}`),
  ];
  // A list page is parsed item by item (`parse-page.ts`) only when no secret can be in it, as is or
  // spelled in escapes: then scrubbing it would change nothing. Bytes are compared as the text's
  // characters are, save for one a bad byte decodes to (U+FFFD), which a secret never holds.
  const secretBytes = [...secrets, ...escapesOfSecret].map((v) => Buffer.from(v, 'utf8'));
  const pagesApart = !secrets.some((v) => v.includes('\uFFFD'));
  /** How a list's answer is read: a page that may be parsed apart is; any other body is text. */
  const readListAnswer = (body: Buffer, status: number, pass?: PassOver): string | ParsedPage => {
    if (status < 200 || status >= 300 || !pagesApart || body.length > UNCOUNTED_BYTES) return body.toString('utf8');
    for (const secret of secretBytes) if (body.includes(secret)) return body.toString('utf8');
    return parsePage(body, pass) ?? body.toString('utf8');
  };
  let closed = false;
  // The same headers on every read (undici copies them; never changed after this): one object, not
  // one per request. A change adds its content type and idempotency key to a copy.
  const readHeaders: Readonly<Record<string, string>> = Object.freeze({
    accept: 'application/json',
    authorization: `Bearer ${token.reveal()}`,
    'user-agent': 'deploy-watchdog',
  });

  function observe(event: ApiAttempt): void {
    if (!options.observer) return;
    try {
      options.observer(event);
    } catch (err) {
      logger.warn({ fn: event.fn, err: scrub(String(err)) }, 'api observer threw; ignored');
    }
  }

  async function call<N extends FunctionName>(
    name: N,
    args: CallArgs<N> = {},
    opts: CallOptions = {},
  ): Promise<AnswerOf<N>> {
    const target = targetOf(name, args, opts);
    const { spec } = target;

    for (let attempt = 1; ; attempt++) {
      let error: ApiCallError;
      try {
        await waitForToken(spec.name, opts);
        return (await attemptOnce(target, attempt, opts)) as AnswerOf<N>;
      } catch (err) {
        if (!(err instanceof ApiCallError)) throw err;
        error = err;
      }
      error.attempts = attempt;
      if (error instanceof ApiTransportError && (error.reason === 'aborted' || error.reason === 'deadline'))
        throw error;
      // A 429, whatever its body: every request waits, for its Retry-After if it has one, and the rate is halved.
      if ((error instanceof ApiError || error instanceof ApiResponseError) && error.status === 429)
        slowDown(spec.name, policy.pauseAfter(error));
      const decision = policy.decide({ kind: spec.kind, error, attempt, now: clock.now(), deadline: opts.deadline });
      if (!decision.retry) {
        if (attempt > 1 || decision.reason === 'change_not_retried') {
          logger.debug({ fn: spec.name, attempt, reason: decision.reason }, 'api call failed; not retried');
        }
        throw error;
      }
      retries.warn(
        { fn: spec.name, attempt, reason: decision.reason, delayMs: decision.delayMs, error: error.message },
        'api read failed; retrying',
        `${spec.name}:${decision.reason}`,
      );
      await clock.sleep(decision.delayMs, opts.signal).catch(() => {
        const aborted = new ApiTransportError(spec.name, 'aborted', 'aborted by the caller while waiting to retry');
        aborted.attempts = attempt;
        throw aborted;
      });
    }
  }

  /** What every attempt of one call sends and reads with: checked against the catalogue, before anything is sent. */
  function targetOf<N extends FunctionName>(name: N, args: CallArgs<N>, opts: CallOptions) {
    const spec = (FUNCTIONS as Record<string, FunctionSpec>)[name];
    if (!spec) throw new ApiUsageError(String(name), 'no such function in the catalogue');
    if (closed) throw new ApiUsageError(spec.name, 'the client is closed');
    const path = buildPath(spec, args);
    const search = encodeParams(spec, args.query);
    const body = spec.method === 'POST' ? JSON.stringify(checkParams(spec, 'body', args.body)) : undefined;
    if (spec.method !== 'POST' && args.body !== undefined) throw new ApiUsageError(spec.name, 'a read takes no body');
    if (spec.kind === 'change' && !opts.idempotencyKey) {
      throw new ApiUsageError(spec.name, 'a change needs an idempotency key (CallOptions.idempotencyKey)');
    }
    // A change (the only POST, so the only body) adds its content type and idempotency key.
    const headers =
      spec.kind === 'change'
        ? { ...readHeaders, 'content-type': 'application/json', 'idempotency-key': opts.idempotencyKey! }
        : readHeaders;
    const answer: z.ZodType = opts.view === undefined ? spec.answer : spec.paged ? pageOf(opts.view) : opts.view;
    // A list (or an answer holding records) read with somewhere to set bad records aside is read
    // record by record.
    const perRecord = (spec.paged === true || spec.records !== undefined) && opts.quarantine !== undefined;
    return { spec, answer, pathAndQuery: `${path}${search}`, headers, body, perRecord };
  }

  /**
   * A 429: every request waits (its `Retry-After`, capped, or a while), and the rate in force is
   * halved. Said at warn once a spell (the first 429 after the rate came all the way back), the
   * others at debug.
   */
  function slowDown(fn: string, retryAfterMs: number | undefined): void {
    const { pauseMs, requestsPerSecond, first } = limiter.backOff(retryAfterMs);
    const said = { fn, pauseMs, requestsPerSecond: Math.round(requestsPerSecond * 100) / 100 };
    const answered = retryAfterMs === undefined ? '429 without Retry-After' : '429';
    const message = `the service answered ${answered}: every request waits ${pauseMs} ms and the rate is down to ${said.requestsPerSecond}/s; if this keeps happening, set api.requests_per_second below that`;
    logger[first ? 'warn' : 'debug'](said, message);
  }

  async function waitForToken(fn: string, opts: CallOptions): Promise<void> {
    if (opts.signal?.aborted) throw new ApiTransportError(fn, 'aborted', 'aborted by the caller');
    if (opts.deadline !== undefined && clock.now() >= opts.deadline) {
      throw new ApiTransportError(fn, 'deadline', 'the deadline of the call has passed');
    }
    const outcome = await limiter.acquire(opts.signal, opts.deadline).catch(() => {
      throw new ApiTransportError(fn, 'aborted', 'aborted by the caller while waiting for the rate limit');
    });
    if (outcome === 'past_deadline') {
      throw new ApiTransportError(fn, 'deadline', 'the rate limit would hold the request past the deadline');
    }
  }

  async function attemptOnce(
    target: ReturnType<typeof targetOf>,
    attempt: number,
    opts: CallOptions,
  ): Promise<unknown> {
    const { spec } = target;
    // The signal may have fired while we waited for the rate limit; its event will not fire again.
    if (opts.signal?.aborted) throw new ApiTransportError(spec.name, 'aborted', 'aborted by the caller');
    // The deadline is clock time; while one request is on the wire it is held as real milliseconds
    // from now, since the request itself is real I/O (a ManualClock does not move during it).
    const perRequest = opts.timeoutMs ?? timeoutMs;
    const remaining = opts.deadline === undefined ? Infinity : opts.deadline - clock.now();
    const limitMs = Math.max(0, Math.min(perRequest, remaining));
    const limitReason: TransportReason = remaining < perRequest ? 'deadline' : 'timeout';
    // `ended` names who ended the attempt (our timer or the caller); undici's error then says only "aborted".
    let ended: TransportReason | undefined;
    const exchange = startExchange(dispatcher, {
      origin,
      path: `${root}${target.pathAndQuery}`,
      method: spec.method,
      headers: target.headers,
      body: target.body,
      // undici's own timers as a backstop only; ours below names the reason.
      backstopMs: limitMs + 1_000,
      maxBytes: maxAnswerBytes,
      largeAnswers,
      read: target.spec.paged ? (bytes, status) => readListAnswer(bytes, status, opts.passOver) : undefined,
    });
    const end = (reason: TransportReason) => {
      ended ??= reason;
      exchange.abort(new Error(`ended: ${reason}`));
    };
    const timer = setTimeout(() => end(limitReason), limitMs);
    const onAbort = () => end('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    let status: number | undefined;
    let bytes: number | undefined;
    /** The attempt said in the debug log and to the observer: answered, or failed with `errorCode`. */
    const report = (failed: boolean, errorCode?: string) => {
      const durationMs = Math.round(performance.now() - started);
      // Guarded: the log object would otherwise be built for every request with debug off.
      if (logger.isLevelEnabled('debug')) {
        const path = `${API_PREFIX}${target.pathAndQuery}`;
        const said = { fn: spec.name, method: spec.method, path, status, ms: durationMs, attempt };
        if (failed) logger.debug({ ...said, errorCode }, 'api request failed');
        else logger.debug(said, 'api request');
      }
      observe({ fn: spec.name, status, ...(failed && { errorCode }), durationMs, attempt, bytes });
    };
    try {
      let res: ExchangeAnswer<string | ParsedPage>;
      try {
        res = await exchange.answer;
      } catch (err) {
        if (err instanceof AnswerTooLarge) {
          throw new ApiResponseError(spec.name, {
            status: err.status,
            problem: 'too_large',
            detail: `more than ${formatBytes(err.maxBytes)} (api.max_answer_size)`,
          });
        }
        throw transportError(spec.name, err, ended, limitMs);
      }
      status = res.status;
      bytes = res.bytes;
      const answer = interpret(target, res);
      report(false);
      opts.onAnswer?.({ status, replayed: String(res.replayed ?? '').toLowerCase() === 'true' });
      return answer;
    } catch (err) {
      report(true, failureCode(err));
      throw err;
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Parsed (or failed): a large answer's turn at the gate is over.
      exchange.release();
    }
  }

  function transportError(
    fn: string,
    err: unknown,
    ended: TransportReason | undefined,
    limitMs: number,
  ): ApiTransportError {
    if (ended === 'timeout') return new ApiTransportError(fn, 'timeout', `no complete answer within ${limitMs} ms`);
    if (ended === 'deadline')
      return new ApiTransportError(fn, 'deadline', `the deadline of the call passed during the request`);
    if (ended === 'aborted') return new ApiTransportError(fn, 'aborted', 'aborted by the caller');
    const code = (err as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new ApiTransportError(fn, 'timeout', scrub(`${code}: ${(err as Error).message}`));
    }
    const detail = err instanceof Error ? `${code ?? err.name}: ${err.message}` : String(err);
    return new ApiTransportError(fn, 'connection', scrub(detail));
  }

  /** The `data` of an answer's text, scrubbed of the secrets; a refusal or a body that is not one throws. */
  function dataOfText(
    spec: FunctionSpec,
    status: number,
    received: string,
    retryAfterMs: number | undefined,
    fail: FailAnswer,
  ): unknown {
    // The one place service text is scrubbed (a page parsed apart had nothing to scrub): from here
    // on, no answer, record, error message or excerpt can carry the token, whatever the service
    // echoed where.
    const text = scrub(received);
    if (text.length > UNCOUNTED_BYTES && jsonValueBound(text, maxAnswerValues) > maxAnswerValues) {
      throw fail('too_large', `more than ${maxAnswerValues} JSON values (api.max_answer_values)`);
    }
    const trimmed = text.trim();
    // An empty body is no error envelope either: the same problem whatever the status.
    if (trimmed === '') throw fail('empty', 'no body');
    let json: unknown;
    let isJson = false;
    try {
      // An escape (`\u0073…`) can spell the token where the text does not: only answers with
      // such an escape pay for looking at every string once parsed (a reviver costs ~3× the parse).
      json = escapesOfSecret.some((e) => trimmed.includes(e)) ? JSON.parse(trimmed, scrubString) : JSON.parse(trimmed);
      isJson = true;
    } catch {
      // handled below, by status
    }
    if (status < 200 || status >= 300) {
      const envelope = isJson ? errorEnvelopeSchema.safeParse(json) : undefined;
      if (envelope?.success) {
        const { code, message } = envelope.data.error;
        throw new ApiError(spec.name, { code, status, message, retryAfterMs });
      }
      throw fail(isJson ? 'bad_envelope' : 'not_json', excerpt(trimmed));
    }
    if (!isJson) throw fail('not_json', excerpt(trimmed));
    if (typeof json !== 'object' || json === null || Array.isArray(json) || !('data' in json)) {
      throw fail('bad_envelope', `no "data" member: ${excerpt(trimmed)}`);
    }
    return (json as { data: unknown }).data;
  }

  /**
   * The answer of one attempt at `target`: its `data` parsed with the target's schema (record by
   * record with a quarantine), or the error that says what is wrong with it.
   */
  function interpret(target: ReturnType<typeof targetOf>, res: ExchangeAnswer<string | ParsedPage>): unknown {
    const { spec, answer: schema, perRecord } = target;
    const { status, body: received } = res;
    const retryAfterMs = parseRetryAfter(res.retryAfter, clock.now());
    const fail: FailAnswer = (problem, detail, where) =>
      new ApiResponseError(spec.name, { status, problem, detail, retryAfterMs, ...where });
    // A page parsed apart is a 2xx answer with its `data`, and holds no secret (`readListAnswer`).
    const data = typeof received === 'string' ? dataOfText(spec, status, received, retryAfterMs, fail) : received.data;
    const passed = typeof received === 'string' ? undefined : received.passed;
    if (perRecord && spec.paged) {
      const page = recordByRecord(spec.name, schema, data, fail);
      return passed ? { ...page, passed } : page;
    }
    const { whole, aside } = perRecord ? recordsOneByOne(spec, schema, data) : { whole: data, aside: [] };
    const parsedWhole = interpretWhole(spec, schema, whole, fail);
    if (aside.length > 0) return { ...(parsedWhole as object), quarantined: aside };
    return passed ? { ...(parsedWhole as Page<unknown>), passed } : parsedWhole;
  }

  /**
   * An answer that is not a list whose field `spec.records` holds records (attention's sections):
   * each that does not fit is set aside, and the answer is read without it.
   */
  function recordsOneByOne(
    spec: FunctionSpec,
    schema: z.ZodType,
    data: unknown,
  ): { whole: unknown; aside: QuarantinedRecord[] } {
    const field = spec.records!;
    const records = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[field] : undefined;
    const element = elementSchemaOf(schema, field);
    if (!Array.isArray(records) || !element) return { whole: data, aside: [] };
    const aside: QuarantinedRecord[] = [];
    const kept = records.filter((record) => {
      const read = parseRecord(element, record, options.extraValues, zonelessAsUtc);
      if (!read.ok) aside.push(quarantined(spec.name, record, read.problem));
      return read.ok;
    });
    return { whole: aside.length > 0 ? { ...(data as object), [field]: kept } : data, aside };
  }

  /** A whole answer parsed with `schema`, or the error that names what does not fit. */
  function interpretWhole(spec: FunctionSpec, schema: z.ZodType, data: unknown, fail: FailAnswer): unknown {
    const read = parseRecord(schema, data, options.extraValues, zonelessAsUtc);
    if (read.ok) return read.data;
    const shown = read.issues.slice(0, 5);
    const issuePaths = shown.map((issue) => describePath(issue.path, data, '(answer)'));
    const more = read.issues.length > 5 ? ` (+${read.issues.length - 5} more)` : '';
    const detail = shown.map((issue, i) => `${issuePaths[i]}: ${issue.message}`).join('; ') + more;
    // A read of one record that does not fit says what is wrong with the record, for its quarantine.
    throw fail('schema', detail, {
      issuePaths,
      record: !spec.paged && recordKindOf(spec.name) ? read.problem : undefined,
    });
  }

  /**
   * A list answer read record by record: the envelope (`{items, total}`) must fit, or the page
   * fails; each item that does not fit its schema is set aside (`quarantined`) and the others kept.
   */
  function recordByRecord(fn: string, schema: z.ZodType, data: unknown, fail: FailAnswer): QuarantinedPage<unknown> {
    const envelope = compiledSchema(pageEnvelopeSchema).safeParse(data);
    if (!envelope.success) {
      const issue = envelope.error.issues[0]!;
      const where = describePath(issue.path, data, '(answer)');
      throw fail('schema', `${where}: ${issue.message}`, { issuePaths: [where] });
    }
    const itemSchema = elementSchemaOf(schema, 'items');
    if (!itemSchema) throw new Error('not a page schema: no items array');
    const items: unknown[] = [];
    const quarantinedItems: QuarantinedRecord[] = [];
    for (const item of envelope.data.items) {
      const read = parseRecord(itemSchema, item, options.extraValues, zonelessAsUtc);
      if (read.ok) items.push(read.data);
      else quarantinedItems.push(quarantined(fn, item, read.problem));
    }
    return { items, total: envelope.data.total, quarantined: quarantinedItems };
  }

  /**
   * A `JSON.parse` reviver: every string value, and every object key, scrubbed of the secrets. A
   * key matters as much as a value: a record keyed by the token, spelled in escapes, was stored
   * and shown whole. An object is rebuilt only when one of its keys holds a secret.
   */
  function scrubString(_key: string, value: unknown): unknown {
    if (typeof value === 'string') return scrub(value);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const keys = Object.keys(value);
    if (!keys.some((k) => scrub(k) !== k)) return value;
    return Object.fromEntries(keys.map((k) => [scrub(k), (value as Record<string, unknown>)[k]]));
  }

  function excerpt(text: string): string {
    const flat = text.replace(/\s+/g, ' ');
    return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
  }

  // ---- resource groups -----------------------------------------------------------------------

  const get = <N extends FunctionName>(name: N): GetMethod<N>['get'] =>
    ((id: number, opts?: CallOptions) => call(name, { id } as CallArgs<N>, opts)) as GetMethod<N>['get'];

  /** Functions whose stepped-down page size has been said in the log, and the smallest size said. */
  const pageSizeSaid = new Set<string>();
  let smallestSaid = Infinity;

  /**
   * One page of a walk, at the page size the function takes: `limit`, or the smaller size learned
   * for it. A refusal of the size (`invalid_parameter`) steps down (see {@link PAGE_SIZE_STEPS}) and
   * asks again; the size that works is kept for the function for the life of the client, and said
   * once, with what to set.
   */
  async function fetchPage<N extends FunctionName>(
    name: N,
    args: CallArgs<N>,
    offset: number,
    limit: number,
    opts: CallOptions,
  ): Promise<QuarantinedPage<ItemOf<N> & { id: number }>> {
    let size = Math.min(limit, learnedPageSize.get(name) ?? limit);
    for (;;) {
      try {
        const page = (await call(
          name,
          { ...args, query: { ...args.query, offset, limit: size } as unknown as QueryOf<N> },
          opts,
        )) as QuarantinedPage<ItemOf<N> & { id: number }>;
        if (size < pageSize && !pageSizeSaid.has(name)) {
          pageSizeSaid.add(name);
          // One warning says what to set; another only when a later list needs a smaller size still.
          const level = size < smallestSaid ? 'warn' : 'debug';
          smallestSaid = Math.min(smallestSaid, size);
          logger[level](
            { fn: name, asked: pageSize, taken: size },
            `the service refused limit=${pageSize} for ${name}; its lists are read ${size} at a time. Set api.page_size: ${smallestSaid} to skip the refused requests at start`,
          );
        }
        return page;
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'invalid_parameter') throw err;
        const smaller = smallerPageSize(size, err.serviceMessage);
        if (smaller === undefined) throw err;
        logger.debug(
          { fn: name, refused: size, next: smaller, error: err.message },
          'page size refused; asking for fewer',
        );
        learnedPageSize.set(name, Math.min(learnedPageSize.get(name) ?? Infinity, smaller));
        size = smaller;
      }
    }
  }

  /** A read's answer without the records it set aside (`quarantined`), which go to `opts.quarantine`. */
  async function handOn<T>(answer: Promise<T>, opts: CallOptions | undefined): Promise<T> {
    const { quarantined: aside, ...rest } = (await answer) as T & { quarantined?: QuarantinedRecord[] };
    for (const record of aside ?? []) opts?.quarantine?.add(record);
    return rest as T;
  }

  function listMethods<N extends FunctionName>(name: N, appId?: number): ListMethods<N> {
    const fetcher =
      (query: WalkQuery<N> | undefined, opts: CallOptions | undefined) =>
      (offset: number, limit: number, cancel?: AbortSignal) => {
        // A page asked ahead can be cancelled by the walk as well as by the caller.
        const signal = cancel && opts?.signal ? AbortSignal.any([opts.signal, cancel]) : (cancel ?? opts?.signal);
        return fetchPage(name, { id: appId, query: query as QueryOf<N> }, offset, limit, { ...opts, signal });
      };
    /**
     * What every walk of this list is told: the records it sets aside go to the caller's quarantine,
     * and it reads ahead as the client does (`listAll` may say otherwise).
     */
    const walkOptions = (opts: CallOptions | undefined) => ({
      fn: name,
      pageSize: learnedPageSize.get(name) ?? pageSize,
      newestFirst: NEWEST_FIRST.has(name),
      maxItems: maxListItems,
      logger,
      quarantine: opts?.quarantine,
      readAhead: options.readAhead,
    });
    return {
      list: ((query: QueryOf<N> | undefined, opts: CallOptions | undefined) =>
        handOn(call(name, { id: appId, query }, opts), opts)) as ListMethods<N>['list'],
      listAll: ((query: WalkQuery<N> | undefined, opts: ListAllOptions<ItemOf<N>> | undefined) =>
        paginate(fetcher(query, opts), {
          ...walkOptions(opts),
          readAhead: opts?.readAhead ?? options.readAhead,
          until: opts?.until as ((item: ItemOf<N> & { id: number }) => boolean) | undefined,
          keep: opts?.keep as ((item: ItemOf<N> & { id: number }) => boolean) | undefined,
        })) as ListMethods<N>['listAll'],
      pages: ((query: WalkQuery<N> | undefined, opts: CallOptions | undefined) =>
        pageStream(fetcher(query, opts), walkOptions(opts))) as ListMethods<N>['pages'],
    };
  }

  /** A change with a body: sent once, with its idempotency key (`ChangeOptions`). */
  const change =
    <N extends FunctionName>(name: N) =>
    (id: number, body: BodyOf<N>, opts: ChangeOptions) =>
      call(name, { id, body }, opts);

  return {
    apps: {
      get: get('apps.get'),
      ...listMethods('apps.list'),
      backup: change('apps.backup'),
      maintenance: change('apps.maintenance'),
      restart: (id: number, opts: ChangeOptions) => call('apps.restart', { id, body: {} }, opts),
      update: change('apps.update'),
      updateModules: change('apps.update_modules'),
    },
    runs: { get: get('runs.get'), ...listMethods('runs.list'), retry: change('runs.retry') },
    backups: { get: get('backups.get'), ...listMethods('backups.list') },
    urls: listMethods('urls.list'),
    servers: { get: get('servers.get'), ...listMethods('servers.list') },
    projects: { get: get('projects.get'), ...listMethods('projects.list') },
    installers: { get: get('installers.get'), ...listMethods('installers.list') },
    /** The restore points of one app (`restore_points.list`, a list below the app). */
    restorePoints: (appId: number) => listMethods('restore_points.list', appId),
    logs: {
      tail: (appId: number, query?: QueryOf<'logs.tail'>, opts?: CallOptions) =>
        call('logs.tail', { id: appId, query }, opts),
    },
    attention: {
      list: (query?: QueryOf<'attention.list'>, opts?: CallOptions) =>
        handOn(call('attention.list', { query }, opts), opts),
    },
    whoami: (query?: QueryOf<'whoami'>, opts?: CallOptions) => call('whoami', { query }, opts),
    /** Calls any function by its dotted name; every method above goes through here. */
    call,
    /** Closes the dispatcher if the client created it; later calls throw ApiUsageError. */
    close: async (): Promise<void> => {
      if (closed) return;
      closed = true;
      if (ownsDispatcher) await dispatcher.close();
    },
  };
}

/** `{id}` filled in, after checking the id is a positive integer (and given when needed). */
function buildPath(spec: FunctionSpec, args: { id?: number }): string {
  if (!spec.path.includes('{id}')) {
    if (args.id !== undefined) throw new ApiUsageError(spec.name, 'this function takes no id');
    return spec.path;
  }
  if (!Number.isSafeInteger(args.id) || (args.id as number) < 1) {
    throw new ApiUsageError(spec.name, `id must be a positive integer, got ${JSON.stringify(args.id)}`);
  }
  return spec.path.replace('{id}', String(args.id));
}

/**
 * Checks parameters against the catalogue: no unknown names (the service would refuse them with
 * unknown_parameter), values of the declared type, required ones present. Types already stop this
 * at compile time; this catches values built at run time (config, policies).
 */
function checkParams(spec: FunctionSpec, where: 'query' | 'body', params: object | undefined): Record<string, unknown> {
  const specs = spec[where];
  const given = (params ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const p: ParamSpec | undefined = specs[key];
    if (!p)
      throw new ApiUsageError(
        spec.name,
        `unknown ${where} parameter "${key}" (known: ${Object.keys(specs).join(', ') || 'none'})`,
      );
    const problem = typeProblem(p, value);
    if (problem) throw new ApiUsageError(spec.name, `${where} parameter "${key}" ${problem}`);
    out[key] = value;
  }
  for (const [key, p] of Object.entries(specs)) {
    if (p.required && out[key] === undefined)
      throw new ApiUsageError(spec.name, `${where} parameter "${key}" is required`);
  }
  return out;
}

function typeProblem(p: ParamSpec, value: unknown): string | undefined {
  const [fits, what] =
    p.type === 'integer'
      ? [Number.isSafeInteger(value), 'an integer']
      : p.type === 'enum'
        ? [typeof value === 'string' && p.values.includes(value), `one of ${p.values.join(', ')}`]
        : [typeof value === p.type, `a ${p.type}`];
  return fits ? undefined : `must be ${what}, got ${JSON.stringify(value)}`;
}

function encodeParams(spec: FunctionSpec, params: object | undefined): string {
  const checked = Object.entries(checkParams(spec, 'query', params));
  const s = new URLSearchParams(checked.map(([key, value]) => [key, String(value)] as [string, string])).toString();
  return s ? `?${s}` : '';
}

/** `16 MiB`, `512 KiB`, `900 bytes`. */
function formatBytes(bytes: number): string {
  if (bytes >= MIB && bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The next page size to ask for after `refused` was refused: the size the service's message names,
 * when it names one between the reference's 50 and `refused` ("limit must be at most 200"), else
 * the next of {@link PAGE_SIZE_STEPS}; none below 50, which the reference makes every list take
 * (a refusal of it is about something else, and is the caller's to see).
 */
export function smallerPageSize(refused: number, message: string): number | undefined {
  const floor = PAGE_SIZE_STEPS.at(-1)!;
  if (refused <= floor) return undefined;
  const named = [...message.matchAll(/\d+/g)].map((m) => Number(m[0])).find((n) => n >= floor && n < refused);
  return named ?? PAGE_SIZE_STEPS.find((n) => n < refused);
}
