/**
 * The lower bound of a cycle: the same requests (same paths and queries, in the same order) fetched
 * by a bare undici loop with the same concurrency, receiving each body and doing nothing else.
 * The watchdog cannot be faster than the service answering these pages.
 *
 * The loop uses undici's cheapest path, `dispatch` with a handler that only counts the bytes (no
 * body stream, no decoding), the same transport the client uses (`src/api/exchange.ts`): the bound
 * is what the service allows, not what `request()` costs.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request, type Dispatcher } from 'undici';
import type { SeenRequest } from './counting-dispatcher.js';

/** What the bare loop measured. */
export interface BareFetchResult {
  ms: number;
  requests: number;
  bytes: number;
}

/** Options of {@link bareFetch}. */
export interface BareFetchOptions {
  /** The simulator's origin, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  token: string;
  /** Requests in flight at once (the cycle's `api.concurrency`). */
  concurrency: number;
  connections?: number;
}

/** Fetches every GET of `requests` and returns the wall time. Changes (POST) are left out: a bound on reading. */
export async function bareFetch(requests: readonly SeenRequest[], options: BareFetchOptions): Promise<BareFetchResult> {
  const gets = requests.filter((r) => r.method === 'GET');
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: options.connections ?? 8 });
  const headers = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      const r = gets[i];
      if (!r) return;
      bytes += await fetchBytes(agent, options.origin, r.path, headers);
    }
  };
  // Warm the connection pool the way the watchdog's agent is warm after its first cycle.
  await request(`${options.origin}/api/v1/whoami`, { headers, dispatcher: agent }).then((r) => r.body.dump());
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  const ms = performance.now() - started;
  await agent.close();
  return { ms, requests: gets.length, bytes };
}

/** One GET through `dispatch`; resolves with the body's size once the answer has ended. */
function fetchBytes(agent: Agent, origin: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    agent.dispatch({ origin, path, method: 'GET', headers }, {
      // undici takes a handler for its current API by this method; it has nothing to do here.
      onRequestStart: () => {},
      onResponseData: (_c, chunk) => {
        n += chunk.length;
      },
      onResponseEnd: () => resolve(n),
      onResponseError: (_c, err) => reject(err),
    } satisfies Dispatcher.DispatchHandler);
  });
}
