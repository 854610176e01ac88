import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { readApps } from './read-apps.js';
import type { UrlsSnapshot } from './snapshot.js';

/**
 * Reads the `urls` job's snapshot: every page of `urls.list`, keeping the records an enabled check
 * could find a problem in (`ctx.relevance`), and the labels of those records' apps.
 */
export async function collectUrls(ctx: CollectorContext): Promise<UrlsSnapshot> {
  const urls = await readAcrossNamespaces(ctx, (query, opts) =>
    ctx.client.urls.listAll(query, { ...opts, keep: ctx.relevance?.urls }),
  );
  const apps = await readApps(ctx, new Set(urls.map((u) => u.app_id)));
  ctx.logger.debug({ urls: urls.length, apps: apps.size }, 'urls read');
  return { job: 'urls', takenAt: ctx.now, urls, apps };
}
