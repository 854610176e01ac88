import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { LABELS_MAX_AGE_MS } from './shared-apps.js';
import { appLabelsView, type AppLabels } from './views.js';

/**
 * The apps of `apps.list` (all pages, every configured namespace) whose ids are in `only`, keyed by
 * id in list order, each kept as its {@link AppLabels}: the labels and links of the runs and URLs
 * that may be findings. The whole list is read (and checked), the other apps dropped page by page.
 */
export async function readApps(ctx: CollectorContext, only: ReadonlySet<number>): Promise<Map<number, AppLabels>> {
  if (only.size === 0) return new Map();
  if (ctx.sharedApps) {
    // Labels change seldom: a shared list up to LABELS_MAX_AGE_MS old, read again for a new app.
    const shared = await ctx.sharedApps.read(ctx, LABELS_MAX_AGE_MS, only);
    return new Map([...shared.byId].filter(([id]) => only.has(id)));
  }
  const list = await readAcrossNamespaces(ctx, (query, opts) =>
    ctx.client.apps.listAll(query, { ...opts, view: appLabelsView, keep: (app) => only.has(app.id) }),
  );
  return new Map(list.map((app) => [app.id, app]));
}
