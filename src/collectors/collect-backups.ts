import { ApiPaginationError } from '../api/errors.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { BackupsSnapshot } from './snapshot.js';
import { appBackupStateView, newestBackupView, type AppBackupState, type NewestBackup } from './views.js';

/** Walks of a shifting backups list before the read fails. */
const MAX_WALKS = 3;

/**
 * Reads the `backups` job's snapshot: every app of `apps.list` (its `backup_health` and
 * `last_backup_at`) and the newest backup of each app.
 *
 * The newest backups come from ONE walk of `backups.list` (newest first, all apps at once), page
 * by page, keeping only the first backup seen per app and stopping as soon as every app that has a
 * `last_backup_at` has been seen, or until the apps still missing are fewer than the pages left:
 * those (apps whose newest backup is old, far down the list) are then read one by one with
 * `backups.list?app_id=…&limit=1`, never more requests than finishing the walk would take. An
 * estate of 10,000 apps with 300,000 backups reads a few pages, and memory holds one backup per
 * app, never the list; with `ctx.relevance`, only the apps the checks could report (judged as each
 * app's newest backup is met) are kept, with their newest backups. An app without `last_backup_at`
 * has never completed a backup: the walk does not wait for it (it still gets its newest backup when
 * the walk passes one on the way). A list that shifts while paged is walked again, up to
 * {@link MAX_WALKS}.
 */
export async function collectBackups(ctx: CollectorContext): Promise<BackupsSnapshot> {
  // Per namespace: its apps, then the newest backups of those apps from its own backups list.
  const parts = await readAcrossNamespaces(ctx, async (namespace) => {
    const query = namespace === undefined ? {} : { namespace };
    const own = await ctx.client.apps.listAll(query, { signal: ctx.signal, view: appBackupStateView });
    return [{ apps: own, newest: await newestPerApp(ctx, query, own) }];
  });
  const keep = ctx.relevance?.backups;
  const apps: AppBackupState[] = [];
  const newestBackups = new Map<number, NewestBackup>();
  for (const part of parts) {
    for (const app of part.apps) {
      const newest = part.newest.get(app.id);
      if (newest === null) continue; // met during the walk, and nothing the checks could report
      if (newest === undefined && keep && !keep({ app, newest })) continue;
      apps.push(app);
      if (newest) newestBackups.set(app.id, newest);
    }
  }
  ctx.logger.debug({ apps: apps.length, withBackup: newestBackups.size }, 'backups read');
  return { job: 'backups', takenAt: ctx.now, apps, newestBackups };
}

/**
 * The newest backup of each app met, by app id; `null` when it was met with `ctx.relevance` and
 * the checks find nothing in the app with it: neither is kept. An app absent has no backup found.
 */
type NewestByApp = Map<number, NewestBackup | null>;

async function newestPerApp(ctx: CollectorContext, query: { namespace?: string }, apps: readonly AppBackupState[]): Promise<NewestByApp> {
  const byId = new Map(apps.map((a) => [a.id, a]));
  const keep = ctx.relevance?.backups;
  const awaited = apps.filter((a) => a.last_backup_at !== null).map((a) => a.id);
  if (awaited.length === 0) return new Map();
  for (let walk = 1; ; walk++) {
    const found: NewestByApp = new Map();
    // Judged as met, so a fine app's newest backup is garbage at once instead of held to the end.
    const meet = (app: AppBackupState, newest: NewestBackup) => found.set(app.id, !keep || keep({ app, newest }) ? newest : null);
    const missing = new Set(awaited);
    let read = 0;
    let pageSize = 0;
    let total: number | undefined;
    try {
      for await (const page of ctx.client.backups.pages(query, { signal: ctx.signal, view: newestBackupView })) {
        read += page.length;
        pageSize ||= page.length;
        for (const backup of page) {
          const app = backup.app_id === null ? undefined : byId.get(backup.app_id);
          if (!app || found.has(app.id)) continue;
          meet(app, backup);
          missing.delete(app.id);
        }
        // Breaking out ends the walk: the rest of the list is older backups of apps already seen.
        if (missing.size === 0) break;
        // The apps still missing have old newest backups, far down the list: once asking for each
        // of them takes no more requests than the pages left, ask for each (one small answer) instead.
        total ??= (await ctx.client.backups.list({ ...query, limit: 1 }, { signal: ctx.signal })).total;
        if (missing.size <= Math.ceil(Math.max(0, total - read) / Math.max(1, pageSize))) break;
      }
      if (missing.size > 0) {
        const tail = await mapLimit([...missing], ctx.concurrency, async (appId) => {
          const newest = await ctx.client.backups.list({ ...query, app_id: appId, limit: 1 }, { signal: ctx.signal, view: newestBackupView });
          return newest.items[0];
        });
        for (const backup of tail) {
          const app = backup?.app_id == null ? undefined : byId.get(backup.app_id);
          if (app && !found.has(app.id)) meet(app, backup!);
        }
      }
      return found;
    } catch (err) {
      if (!(err instanceof ApiPaginationError) || walk >= MAX_WALKS) throw err;
      ctx.logger.warn({ walk, shift: err.shift }, 'backups list shifted while paged; walking it again');
    }
  }
}
