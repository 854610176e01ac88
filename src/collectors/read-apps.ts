import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { appLabelsView, type AppLabels } from './views.js';

/**
 * Every app of `apps.list` (all pages, every configured namespace), keyed by id in list order,
 * each kept as its {@link AppLabels}: the labels and links of runs and URLs.
 */
export async function readApps(ctx: CollectorContext): Promise<Map<number, AppLabels>> {
  const list = await readAcrossNamespaces(ctx, (namespace) =>
    ctx.client.apps.listAll(namespace === undefined ? {} : { namespace }, { signal: ctx.signal, view: appLabelsView }),
  );
  return new Map(list.map((app) => [app.id, app]));
}
