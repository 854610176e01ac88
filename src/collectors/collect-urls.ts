import type { CollectorContext } from './collector-context.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { readApps } from './read-apps.js';
import type { UrlsSnapshot } from './snapshot.js';

/** Reads the `urls` job's snapshot: every record of `urls.list` (all pages) and the apps map. */
export async function collectUrls(ctx: CollectorContext): Promise<UrlsSnapshot> {
  const urls = await readAcrossNamespaces(ctx, (namespace) =>
    ctx.client.urls.listAll(namespace === undefined ? {} : { namespace }, { signal: ctx.signal }),
  );
  const apps = await readApps(ctx);
  ctx.logger.debug({ urls: urls.length, apps: apps.size }, 'urls read');
  return { job: 'urls', takenAt: ctx.now, urls, apps };
}
