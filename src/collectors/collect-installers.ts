import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { InstallersSnapshot } from './snapshot.js';
import { StateWordTally } from './state-word-tally.js';

/**
 * Reads the `installers` job's snapshot: every record of `installers.list` (all pages, every
 * configured namespace). One short walk: an estate has about one service per ten apps. A job of
 * its own rather than a part of the servers job: it needs `ansible_installer: read`, which a token
 * may lack without the servers check losing anything, and it runs less often than every minute.
 */
export async function collectInstallers(ctx: CollectorContext): Promise<InstallersSnapshot> {
  const installers = await readAcrossNamespaces(ctx, (query, opts) => ctx.client.installers.listAll(query, opts));
  const stateWords = new StateWordTally('installer');
  for (const installer of installers) stateWords.see(installer.state);
  ctx.logger.debug({ installers: installers.length }, 'marketplace services read');
  return { job: 'installers', takenAt: ctx.now, stateWords: [stateWords], installers };
}
