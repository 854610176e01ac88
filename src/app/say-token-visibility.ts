/**
 * Says what the API token can read (`token-visibility.ts`), once per start and reload: in the log
 * (its levels per namespace; a warning per limit) and in the state's `meta`, where the console's
 * sources page reads it. Never fatal: a failure is logged and the daemon goes on.
 */
import type { ApiClient } from '../api/client.js';
import { learnTokenVisibility, TOKEN_VISIBILITY_KEY, type TokenVisibility } from '../collectors/token-visibility.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Store } from '../state/store.js';

/** Learns, logs and keeps what the token can read; undefined when it could not (stopped, state refused). */
export async function sayTokenVisibility(
  client: ApiClient,
  store: Store,
  clock: Clock,
  logger: Logger,
  signal?: AbortSignal,
): Promise<TokenVisibility | undefined> {
  let visibility: TokenVisibility;
  try {
    visibility = await learnTokenVisibility(client, clock.now(), signal);
  } catch (err) {
    if (!signal?.aborted) logger.warn({ err }, 'cannot learn what the token can read');
    return undefined;
  }
  const { levels, environments, limits } = visibility;
  logger.info(
    {
      levels: levels && Object.fromEntries(levels.map((l) => [l.namespace, l.level])),
      environments: Object.fromEntries(environments.map((e) => [e.type, e.readById ?? (e.listed ? 'listed' : 'none')])),
    },
    limits.length === 0 ? 'the token reads every environment it lists, by id too' : 'what the token cannot read',
  );
  for (const limit of limits) logger.warn(limit);
  try {
    store.transaction(() => store.setMeta(TOKEN_VISIBILITY_KEY, JSON.stringify(visibility)));
  } catch (err) {
    // A follower fenced out, a state that refuses writes: the log has said it.
    logger.debug({ err }, 'cannot keep what the token can read for the console');
  }
  return visibility;
}
