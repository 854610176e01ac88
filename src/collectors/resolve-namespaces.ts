import type { ApiClient } from '../api/client.js';
import { permissionDenial } from '../api/describe-error.js';
import type { CollectorContext } from './collector-context.js';

/** A configured namespace the token does not reach: a configuration problem, not an outage. */
export class NamespaceError extends Error {
  override readonly name = 'NamespaceError';

  constructor(
    readonly missing: readonly string[],
    readonly reached: readonly string[],
  ) {
    super(
      `api.namespaces: the token does not reach ${missing.map((m) => `"${m}"`).join(', ')}` +
        ` (it reaches: ${reached.length > 0 ? reached.join(', ') : 'none'})`,
    );
  }
}

/** Which namespaces the collectors read, and which the token reaches (null: whoami could not tell). */
export type NamespaceScope = Required<Pick<CollectorContext, 'namespaces' | 'reached'>>;

/**
 * Asks `whoami` which namespaces the token reaches. With `api.namespaces` set, every one of them
 * must be reached (by code, name or id), else {@link NamespaceError} names the missing ones, and
 * each is read by its code (a list refuses a name with namespace_not_found); with it
 * empty, lists are read without the parameter. A token without `workspace: read` cannot ask (it is
 * refused with function_not_allowed or access_denied): the configured namespaces are then used as
 * given (a wrong one fails its list with namespace_not_found).
 */
export async function resolveNamespaces(
  client: ApiClient,
  configured: readonly string[],
  signal?: AbortSignal,
): Promise<NamespaceScope> {
  const identity = await client.whoami({}, { signal }).catch((err: unknown) => {
    // The reference grades denials loosely (§5.5): a token without `workspace: read` may hear
    // function_not_allowed or access_denied. Either way whoami is optional, never a reason to stop.
    if (!permissionDenial(err)) throw err;
    return null;
  });
  if (!identity) return { namespaces: configured.length > 0 ? [...configured] : null, reached: null };
  const reached = identity.namespaces.map((n) => n.code);
  if (configured.length === 0) return { namespaces: null, reached };
  // Lists take a namespace by its code or id only (reference §4), never its name: each is read by code.
  const codes: string[] = [];
  const missing: string[] = [];
  for (const want of configured) {
    const namespace = identity.namespaces.find((n) => n.code === want || n.name === want || String(n.id) === want);
    if (namespace === undefined) missing.push(want);
    else if (!codes.includes(namespace.code)) codes.push(namespace.code);
  }
  if (missing.length > 0) throw new NamespaceError(missing, reached);
  return { namespaces: codes, reached };
}
