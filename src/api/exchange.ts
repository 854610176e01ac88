/**
 * One HTTP request and its whole answer, through undici's low-level `Dispatcher.dispatch`.
 *
 * Why not undici's `request()`: that wraps every answer in a Node `Readable` body stream and every
 * cancellation in an `AbortSignal` listener, and the client reads each body whole anyway. A 10,000-
 * app cycle makes ~10,000 requests, so that machinery was a large part of the watchdog's own CPU:
 * measured on 10,000 `apps.get` against the simulator, `request()` + `arrayBuffer()` cost 45–52 µs
 * of CPU per request, this 33–36 µs. The body is collected as the chunks arrive and joined once, in
 * a buffer every exchange reuses (`body-bytes.ts`).
 */
import type { Dispatcher } from 'undici';
import { LARGE_ANSWER_BYTES, type LargeAnswerGate } from './large-answer-gate.js';
import { withBodyBytes } from './body-bytes.js';

/** What came back: the status, the headers the client reads, and the body as `read` made it. */
export interface ExchangeAnswer<T = string> {
  status: number;
  retryAfter: string | string[] | undefined;
  /** `Idempotent-Replayed`: the service says it answered a change again from its store. */
  replayed: string | string[] | undefined;
  body: T;
  bytes: number;
}

/**
 * The body grew past `ExchangeRequest.maxBytes`: the exchange is ended there (the connection is
 * dropped), so an answer of any size, an endless one included, costs at most that much memory.
 */
export class AnswerTooLarge extends Error {
  override readonly name = 'AnswerTooLarge';
  constructor(
    readonly maxBytes: number,
    /** The answer's HTTP status. */
    readonly status: number,
  ) {
    super(`answer too large: more than ${maxBytes} bytes`);
  }
}

/** The request of one exchange; its answer's body is read by `read` (default: as UTF-8 text). */
export interface ExchangeRequest<T = string> {
  /** `http://host:port`. */
  origin: string;
  /** Path and query. */
  path: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
  /** undici's own header and body timers (a backstop: the caller keeps its own, which names the reason). */
  backstopMs: number;
  /** The largest body taken; past it the exchange ends with {@link AnswerTooLarge}. */
  maxBytes: number;
  /** The client's gate for answers past {@link LARGE_ANSWER_BYTES}: one read and parsed at a time. */
  largeAnswers?: LargeAnswerGate;
  /**
   * What the body is made into, given its bytes and the answer's status when it has fully arrived.
   * The bytes may be reused once it returns (`body-bytes.ts`): it must decode or copy what it keeps.
   * A throw fails the exchange with that error.
   */
  read?: (body: Buffer, status: number) => T;
}

/** An exchange under way: its answer, and a way to end it early. */
export interface Exchange<T = string> {
  /** Resolves with the whole answer; rejects with undici's error, or the reason given to `abort`. */
  answer: Promise<ExchangeAnswer<T>>;
  /**
   * Ends the exchange: `answer` rejects with `reason` at once, and the request is cancelled now, or
   * as soon as undici takes it from its queue when every connection was busy.
   */
  abort(reason: Error): void;
  /**
   * Gives up its place at {@link ExchangeRequest.largeAnswers}: call once the answer is parsed (a
   * failed or aborted exchange gives it up by itself). Idempotent.
   */
  release(): void;
}

/** The body as UTF-8 text: how an exchange reads it unless told otherwise. */
const asText = (body: Buffer): string => body.toString('utf8');

/** Starts one exchange through `dispatcher`. */
export function startExchange<T = string>(dispatcher: Dispatcher, req: ExchangeRequest<T>): Exchange<T> {
  const read = req.read ?? (asText as unknown as (body: Buffer, status: number) => T);
  let controller: Dispatcher.DispatchController | undefined;
  let abortReason: Error | undefined;
  let settle!: { resolve: (a: ExchangeAnswer<T>) => void; reject: (e: Error) => void };
  const answer = new Promise<ExchangeAnswer<T>>((resolve, reject) => (settle = { resolve, reject }));
  let status = 0;
  let retryAfter: string | string[] | undefined;
  let replayed: string | string[] | undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;
  /** This exchange, as the large-answer gate knows it. */
  const self = {};
  const release = () => req.largeAnswers?.leave(self);
  const end = (reason: Error) => {
    if (abortReason) return;
    abortReason = reason;
    release();
    settle.reject(reason);
    chunks.length = 0; // what was read is no longer needed: let it go now, not when undici is done
    if (controller) controller.abort(reason);
  };

  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      // Aborted while waiting for a connection: undici hands over the controller only now.
      if (abortReason) c.abort(abortReason);
    },
    onResponseStart(_c, statusCode, headers) {
      status = statusCode;
      retryAfter = headers['retry-after'];
      replayed = headers['idempotent-replayed'];
      // A length announced past the cap is refused before a byte of the body is read.
      const length = Number(headers['content-length']);
      if (length > req.maxBytes) end(new AnswerTooLarge(req.maxBytes, status));
    },
    onResponseData(c, chunk) {
      if (abortReason) return;
      bytes += chunk.length;
      if (bytes > req.maxBytes) {
        end(new AnswerTooLarge(req.maxBytes, status));
        return;
      }
      chunks.push(chunk);
      // Large: read on only holding the gate; else pause until it is this exchange's turn.
      if (bytes > LARGE_ANSWER_BYTES && req.largeAnswers && !req.largeAnswers.enter(self, () => c.resume())) c.pause();
    },
    onResponseEnd() {
      if (abortReason) return;
      try {
        const body = withBodyBytes(chunks, bytes, (b) => read(b, status));
        settle.resolve({ status, retryAfter, replayed, body, bytes });
      } catch (err) {
        release();
        settle.reject(err instanceof Error ? err : new Error(String(err)));
      } finally {
        chunks.length = 0;
      }
    },
    onResponseError(_c, err) {
      release();
      settle.reject(err);
    },
  };

  try {
    dispatcher.dispatch(
      {
        origin: req.origin,
        path: req.path,
        method: req.method,
        headers: req.headers,
        body: req.body,
        headersTimeout: req.backstopMs,
        bodyTimeout: req.backstopMs,
      },
      handler,
    );
  } catch (err) {
    // undici's own dispatchers report every failure through onResponseError (a closed Agent too);
    // a dispatcher of the caller's may throw instead.
    settle.reject(err instanceof Error ? err : new Error(String(err)));
  }

  return { answer, abort: end, release };
}
