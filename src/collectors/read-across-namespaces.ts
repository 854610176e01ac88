import type { CallOptions } from '../api/client.js';
import { mapLimit } from './map-limit.js';

/** What a collector's walk is handed besides its query: the read's signal and quarantine. */
export type WalkOptions = Pick<CallOptions, 'signal' | 'quarantine'>;

/**
 * Calls `read` once per configured namespace (its query `{ namespace }`) and concatenates the
 * results in namespace order; with no namespaces configured, calls it once with an empty query.
 * Each call is handed the read's signal and quarantine to walk with. Namespaces are read one after
 * another: each read already pages, and the rate limiter is shared anyway.
 */
export async function readAcrossNamespaces<T>(
  ctx: WalkOptions & { readonly namespaces: readonly string[] | null },
  read: (query: { namespace?: string }, opts: WalkOptions, namespace: string | undefined) => Promise<T[]>,
): Promise<T[]> {
  const opts = { signal: ctx.signal, quarantine: ctx.quarantine };
  if (ctx.namespaces === null) return read({}, opts, undefined);
  return (await mapLimit(ctx.namespaces, 1, (namespace) => read({ namespace }, opts, namespace))).flat();
}
