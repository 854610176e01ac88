/**
 * The parts of undici the daemon uses, loaded without the rest of the package.
 *
 * `import … from 'undici'` runs undici's index, which loads every dispatcher, the mocks, the
 * caches, the interceptors and the whole of fetch, WebSocket and EventSource: about 7 MB more
 * resident memory for the process than the agent and `request()` alone (measured with
 * `--expose-gc`, five runs each, with the daemon's other libraries loaded: 71.6–75.1 MB against
 * 66.2–67.0 MB), memory a 10,000-app cycle's peak carries (issue 23's 128 MB). So the agent and
 * `request()` come from their own modules, and fetch (the Slack app's Web API client only) loads
 * the package on first use.
 *
 * The paths are undici's own files, not its public API: `package.json` pins a major version, and
 * `test/lib/undici-core.test.ts` sends a request through each part, so an upgrade that moves them
 * fails the tests, not a running daemon. Types come from the package as usual.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const load = createRequire(import.meta.url);

/** undici's `Agent` (a pool per origin), from its own module. */
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
/** undici's `Agent` instance type. */
export type Agent = Undici.Agent;
/** undici's `Dispatcher` type, with its namespace of option and answer types. */
export type { Dispatcher } from 'undici';

/** undici's `Dispatcher.prototype.request`, before the package's index attaches it. */
const dispatcherRequest = load('undici/lib/api/api-request.js') as (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>;
const { getGlobalDispatcher } = load('undici/lib/global.js') as { getGlobalDispatcher: () => Undici.Dispatcher };

/** What {@link request} takes: undici's request options, with the dispatcher to send through. */
export type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method?: Undici.Dispatcher.HttpMethod;
  dispatcher?: Undici.Dispatcher;
};

/**
 * undici's `request(url, options)`: one request through `options.dispatcher` (undici's global
 * agent when absent), its answer with the body as a stream.
 */
export function request(url: string | URL, options: RequestOptions = {}): Promise<Undici.Dispatcher.ResponseData> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const { dispatcher = getGlobalDispatcher(), ...rest } = options;
  return dispatcherRequest.call(dispatcher, {
    ...rest,
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
    method: options.method ?? 'GET',
  });
}

/** undici's `fetch`, the package loaded whole on the first call (the Slack app channel's Web API client). */
export function fetch(...args: Parameters<typeof Undici.fetch>): ReturnType<typeof Undici.fetch> {
  return (load('undici') as typeof Undici).fetch(...args);
}
