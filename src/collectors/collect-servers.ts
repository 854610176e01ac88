import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { ServersSnapshot } from './snapshot.js';
import { StateWordTally } from './state-word-tally.js';

/**
 * Reads the `servers` job's snapshot: every record of `servers.list` (all pages, every configured
 * namespace). A server carries its own `app_count`, so no apps are read.
 */
export async function collectServers(ctx: CollectorContext): Promise<ServersSnapshot> {
  const servers = await readAcrossNamespaces(ctx, (namespace) =>
    ctx.client.servers.listAll(namespace === undefined ? {} : { namespace }, { signal: ctx.signal }),
  );
  const stateWords = new StateWordTally('server');
  for (const server of servers) stateWords.see(server.state);
  ctx.logger.debug({ servers: servers.length }, 'servers read');
  return { job: 'servers', takenAt: ctx.now, stateWords, servers };
}
