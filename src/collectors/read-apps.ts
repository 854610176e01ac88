import type { AppListItem } from '../api/schemas.js';
import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';

/**
 * Every app of `apps.list` (all pages, every configured namespace), keyed by id in list order:
 * the labels and links of runs, URLs and backups.
 */
export async function readApps(ctx: CollectorContext): Promise<Map<number, AppListItem>> {
  const list = await readAcrossNamespaces(ctx, (namespace) =>
    ctx.client.apps.listAll(namespace === undefined ? {} : { namespace }, { signal: ctx.signal }),
  );
  return new Map(list.map((app) => [app.id, app]));
}
