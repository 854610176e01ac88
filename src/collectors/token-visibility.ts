/**
 * What the API token can read, learned at start and on reload with a handful of requests, and
 * said once (the log, the console's sources page): its access level per namespace (`whoami`), per
 * environment type whether `apps.list` gives it any app there, and whether a read by id of one
 * such app is refused (reference §5.4: reads by id are graded by the record's environment, so a
 * list may show what `get` refuses). A role that hides production reads as a complete estate
 * without this: the sentences say what the watchdog cannot see.
 *
 * Never fatal: a request that fails leaves its part unknown, and the daemon goes on.
 */
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import { environmentTypeSchema, type EnvironmentType } from '../api/schemas.js';
import { unlessAborted } from '../lib/unless-aborted.js';

/** The environment types the reference states (§2). */
const ENVIRONMENT_TYPES: readonly EnvironmentType[] = environmentTypeSchema.options;

/** What reads by id of one environment type answered: allowed, refused (`access_denied`), or unknown. */
export type ReadByIdAnswer = 'allowed' | 'refused' | 'unknown';

/** What the token can read, as learned. */
export interface TokenVisibility {
  /** When it was learned (ms since the epoch). */
  learnedAt: number;
  /** Access level per namespace reached (whoami), or null when whoami could not tell. */
  levels: { namespace: string; level: string }[] | null;
  /**
   * Per environment type: whether `apps.list` gives any app there (null: the list failed), and what
   * a read by id of the first one answered (absent: none listed to try).
   */
  environments: { type: EnvironmentType; listed: boolean | null; readById?: ReadByIdAnswer }[];
  /** What it means, one sentence each, for the log and the console: empty when it sees everything. */
  limits: string[];
}

/** The `meta` key the learned visibility is kept under, for the console. */
export const TOKEN_VISIBILITY_KEY = 'token_visibility';

/**
 * Learns what the token can read: whoami, then per environment type one `apps.list` of one item
 * and, where it lists one, one `apps.get` of it. At most seven requests.
 */
export async function learnTokenVisibility(
  client: ApiClient,
  now: number,
  signal?: AbortSignal,
): Promise<TokenVisibility> {
  const identity = await unlessAborted(client.whoami({}, { signal }), signal, () => null);
  const levels = identity && identity.namespaces.map((n) => ({ namespace: n.code, level: n.level }));
  const environments: TokenVisibility['environments'] = [];
  for (const type of ENVIRONMENT_TYPES) {
    // The first app the token lists there; null: the list itself failed.
    const query = { environment_type: type, limit: 1 };
    const page = await unlessAborted(client.apps.list(query, { signal }), signal, () => null);
    const first = page && page.items[0];
    if (first === null) environments.push({ type, listed: null });
    else if (first === undefined) environments.push({ type, listed: false });
    else environments.push({ type, listed: true, readById: await readById(client, first.id, signal) });
  }
  return { learnedAt: now, levels, environments, limits: visibilityLimits(environments) };
}

/** What one read by id answers: a refusal for the role (`access_denied`) is what it tells. */
async function readById(client: ApiClient, id: number, signal: AbortSignal | undefined): Promise<ReadByIdAnswer> {
  return unlessAborted(
    client.apps.get(id, { signal }).then((): ReadByIdAnswer => 'allowed'),
    signal,
    (err) => (err instanceof ApiError && err.code === 'access_denied' ? 'refused' : 'unknown'),
  );
}

/**
 * The sentences of what the token cannot see: an environment whose records it cannot read by id
 * (its failed runs are told from the list alone), an environment of which it lists no app (a role
 * that hides it reads as an estate without it). Empty: it sees every environment it lists.
 */
export function visibilityLimits(environments: TokenVisibility['environments']): string[] {
  const out = environments
    .filter((e) => e.readById === 'refused')
    .map(
      (e) =>
        `this token cannot read ${e.type} records by id; failed ${e.type} runs are told from the list alone, without their steps`,
    );
  const unseen = environments.filter((e) => e.listed === false).map((e) => e.type);
  if (unseen.length > 0 && unseen.length < ENVIRONMENT_TYPES.length) {
    const names = unseen.join(' and ');
    out.push(
      `this token lists no ${names} app: if the estate has ${unseen.length > 1 ? 'them' : 'one'}, the token's role hides ${unseen.length > 1 ? 'them' : 'it'} and nothing there is watched`,
    );
  }
  return out;
}

/** The visibility kept under {@link TOKEN_VISIBILITY_KEY}, or undefined (never learned, or unreadable). */
export function parseTokenVisibility(text: string | undefined): TokenVisibility | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as TokenVisibility;
    return Array.isArray(value.environments) && Array.isArray(value.limits) ? value : undefined;
  } catch {
    return undefined;
  }
}
