/**
 * One HTTP request and its whole answer, through undici's low-level `Dispatcher.dispatch`.
 *
 * Why not undici's `request()`: that wraps every answer in a Node `Readable` body stream and every
 * cancellation in an `AbortSignal` listener, and the client reads each body whole anyway. A 10,000-
 * app cycle makes ~10,000 requests, so that machinery was a large part of the watchdog's own CPU:
 * measured on 10,000 `apps.get` against the simulator, `request()` + `arrayBuffer()` cost 45–52 µs
 * of CPU per request, this 33–36 µs. The body is collected as the chunks arrive and joined once.
 */
import type { Dispatcher } from 'undici';

/** What came back: the status, the `Retry-After` header, and the body as text. */
export interface ExchangeAnswer {
  status: number;
  retryAfter: string | string[] | undefined;
  text: string;
  bytes: number;
}

/** The request of one exchange. */
export interface ExchangeRequest {
  /** `http://host:port`. */
  origin: string;
  /** Path and query. */
  path: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
  /** undici's own header and body timers (a backstop: the caller keeps its own, which names the reason). */
  backstopMs: number;
}

/** An exchange under way: its answer, and a way to end it early. */
export interface Exchange {
  /** Resolves with the whole answer; rejects with undici's error, or the reason given to `abort`. */
  answer: Promise<ExchangeAnswer>;
  /**
   * Ends the exchange: `answer` rejects with `reason` at once, and the request is cancelled now, or
   * as soon as undici takes it from its queue when every connection was busy.
   */
  abort(reason: Error): void;
}

/** Starts one exchange through `dispatcher`. */
export function startExchange(dispatcher: Dispatcher, req: ExchangeRequest): Exchange {
  let controller: Dispatcher.DispatchController | undefined;
  let abortReason: Error | undefined;
  let settle!: { resolve: (a: ExchangeAnswer) => void; reject: (e: Error) => void };
  const answer = new Promise<ExchangeAnswer>((resolve, reject) => (settle = { resolve, reject }));
  let status = 0;
  let retryAfter: string | string[] | undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;

  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(c) {
      controller = c;
      // Aborted while waiting for a connection: undici hands over the controller only now.
      if (abortReason) c.abort(abortReason);
    },
    onResponseStart(_c, statusCode, headers) {
      status = statusCode;
      retryAfter = headers['retry-after'];
    },
    onResponseData(_c, chunk) {
      chunks.push(chunk);
      bytes += chunk.length;
    },
    onResponseEnd() {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
      settle.resolve({ status, retryAfter, text: body.toString('utf8'), bytes });
    },
    onResponseError(_c, err) {
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

  return {
    answer,
    abort(reason) {
      if (abortReason) return;
      abortReason = reason;
      settle.reject(reason);
      if (controller) controller.abort(reason);
    },
  };
}
