import { StateWordTally } from './state-word-tally.js';
import { ApiPaginationError } from '../api/errors.js';
import { seeBackup, settledBy, type BackupStates } from './backups-seen.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { CYCLE_WINDOW_MS } from './shared-apps.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { BackupsSeen, BackupsSnapshot } from './snapshot.js';
import { appBackupStateView, newestBackupView, type AppBackupState, type NewestBackup } from './views.js';

/** Walks of a shifting backups list before the read fails. */
const MAX_WALKS = 3;
/** `limit` of a per-app read: the newest backup is usually good, and the next few cover a retry or two. */
const PER_APP_LIMIT = 5;
/**
 * Pages of a per-app read at most: 20 backups, more than a day of hourly ones, all failed or
 * running. Past it, a newest good backup found stands, compared with the sizes read before the bound.
 */
const PER_APP_PAGES = 4;

/**
 * Reads the `backups` job's snapshot: every app of `apps.list` (its state, `backup_health` and
 * `last_backup_at`) and, per watched app, what the backups check judges ({@link BackupsSeen}): its
 * newest backup, its newest finished one and its newest good one (state words from
 * `checks.backups`); none when that check is off and the job runs for app_state alone.
 *
 * They come from ONE walk of `backups.list` (newest first, all apps at once), page by page, each
 * app's backups met in order until the app is settled (`settledBy`: its good backup met, with the
 * `size_history` good ones before it whose sizes it is compared with, or its
 * finished one met and its backups older than its `max_age`), stopping as soon as every app that
 * has a `last_backup_at` is settled, or once the apps still unsettled are fewer than the pages left:
 * those (apps whose good backup is old, far down the list) are then read one by one with
 * `backups.list?app_id=…&limit=5`, paging on while nothing settles them, at most 4 pages (a bound
 * that cuts the read leaves the app's judgements unknown: `stopped: 'bound'`). Each usually takes
 * one request (the newest backup is good), so about no more requests than finishing the walk
 * would take. An estate of 10,000 apps with 300,000 backups reads a few pages, and memory holds at
 * most three backups per app, never the list; with `ctx.relevance`, only the apps the checks could
 * report (judged as each app settles) are kept, with their backups.
 *
 * `last_backup_at` is only a hint here, never evidence of a good backup: an app without one has
 * never completed a backup as far as the service says, so the walk does not wait for it (it still
 * gets the backups the walk passes on the way). Apps of environments whose backups are not watched
 * (no `max_age`) get none. A list that shifts while paged is walked again, up to {@link MAX_WALKS}.
 */
export async function collectBackups(ctx: CollectorContext): Promise<BackupsSnapshot> {
  // Per namespace, one after another: its apps, then what is read of their backups from its own
  // backups list.
  // The apps come from this cycle window's shared `apps.list` when the runtime keeps one.
  const shared = ctx.sharedApps && (await ctx.sharedApps.read(ctx, CYCLE_WINDOW_MS));
  const parts = shared
    ? await mapLimit(shared.parts, 1, async ({ namespace, apps }) => ({
        apps,
        seen: await backupsPerApp(ctx, namespace === undefined ? {} : { namespace }, apps),
      }))
    : await readAcrossNamespaces(ctx, async (query, opts) => {
        const own = await ctx.client.apps.listAll(query, { ...opts, view: appBackupStateView });
        return [{ apps: own, seen: await backupsPerApp(ctx, query, own) }];
      });
  const keep = ctx.relevance?.backups;
  const apps: AppBackupState[] = [];
  const backups = new Map<number, BackupsSeen>();
  const stateWords = new StateWordTally('app');
  const backupWords = new StateWordTally('backup');
  for (const part of parts) {
    for (const app of part.apps) {
      stateWords.see(app.state);
      const seen = part.seen.get(app.id);
      if (seen?.newest.state) backupWords.see(seen.newest.state);
      if (seen === null) continue; // settled during the read, and nothing the checks could report
      if (seen === undefined && keep && !keep({ app, seen })) continue;
      apps.push(app);
      if (seen) backups.set(app.id, seen);
    }
  }
  ctx.logger.debug({ apps: apps.length, withBackup: backups.size }, 'backups read');
  return { job: 'backups', takenAt: ctx.now, stateWords: [stateWords, backupWords], apps, backups };
}

/**
 * What was read of each app's backups, by app id; `null` when it was judged with `ctx.relevance`
 * and the checks find nothing in the app with it: neither is kept. An app absent has no backup read.
 */
type SeenByApp = Map<number, BackupsSeen | null>;

async function backupsPerApp(
  ctx: CollectorContext,
  query: { namespace?: string },
  apps: readonly AppBackupState[],
): Promise<SeenByApp> {
  const config = ctx.checks.backups;
  // The job runs for its other checks alone (app_state, which reads the apps): no backup is judged.
  if (!config.enabled) return new Map();
  // Good backups read past the newest good one, for its size to be compared with (0: none).
  const history = config.size_drop === null ? 0 : config.size_history;
  // Per watched app, the oldest time a good backup may have (now − max_age).
  const horizons = new Map<number, number>();
  for (const app of apps) {
    const maxAge = app.environment_type === null ? undefined : config.max_age[app.environment_type];
    if (maxAge !== null && maxAge !== undefined) horizons.set(app.id, ctx.now - maxAge);
  }
  const byId = new Map(apps.filter((a) => horizons.has(a.id)).map((a) => [a.id, a]));
  const keep = ctx.relevance?.backups;
  const awaited = [...byId.values()].filter((a) => a.last_backup_at !== null).map((a) => a.id);
  if (awaited.length === 0) return new Map();
  for (let walk = 1; ; walk++) {
    // Settled apps (judged as they settle, so a fine app's backups are garbage at once instead of
    // held to the end) and the watched apps not settled yet, each with what was read of it so far:
    // one look-up a backup, for `meet` and `passOver`.
    const settled: SeenByApp = new Map();
    const unsettled = new Map<number, { app: AppBackupState; horizon: number; seen?: BackupsSeen }>();
    for (const [id, app] of byId) unsettled.set(id, { app, horizon: horizons.get(id)! });
    const missing = new Set(awaited);
    const settle = (app: AppBackupState, seen: BackupsSeen | undefined) => {
      unsettled.delete(app.id);
      missing.delete(app.id);
      if (seen) settled.set(app.id, !keep || keep({ app, seen }) ? seen : null);
    };
    const meet = (backup: NewestBackup) => {
      const reading = backup.app_id === null ? undefined : unsettled.get(backup.app_id);
      if (!reading) return;
      reading.seen = seeBackup(reading.seen, backup, config, history);
      if (settledBy(reading.seen, backup, reading.horizon, history) !== null) settle(reading.app, reading.seen);
    };
    let read = 0;
    let pageSize = 0;
    let total: number | undefined;
    let walkedToEnd = true;
    try {
      for await (const page of ctx.client.backups.pages(query, {
        signal: ctx.signal,
        view: newestBackupView,
        quarantine: ctx.quarantine,
        // The backups `meet` would drop are not parsed: an app not watched, or one already settled.
        passOver: { key: 'app_id', when: (appId) => !unsettled.has(appId) },
      })) {
        read += page.walked;
        pageSize ||= page.walked;
        for (const backup of page.items) meet(backup);
        // Breaking out ends the walk: the rest of the list is older backups of apps already settled
        // (and with none missing, none is left to read one by one).
        if (missing.size === 0) break;
        // The apps still missing have old good backups, far down the list: once asking for each of
        // them takes no more requests than the pages left, ask for each (one small answer) instead.
        total ??= (
          await ctx.client.backups.list({ ...query, limit: 1 }, { signal: ctx.signal, quarantine: ctx.quarantine })
        ).total;
        if (missing.size <= Math.ceil(Math.max(0, total - read) / Math.max(1, pageSize))) {
          walkedToEnd = false;
          break;
        }
      }
      // Walked to the end, every app's backups were all met: what is open is all there is.
      const unread = walkedToEnd ? [] : [...missing];
      const tail = await mapLimit(unread, ctx.concurrency, (appId) =>
        readOneApp(ctx, query, appId, config, horizons.get(appId)!, history),
      );
      unread.forEach((appId, i) => settle(byId.get(appId)!, tail[i]));
      // Apps not waited for (no last_backup_at), with what the walk passed of them.
      for (const { app, seen } of unsettled.values()) if (seen) settle(app, seen);
      return settled;
    } catch (err) {
      if (!(err instanceof ApiPaginationError) || walk >= MAX_WALKS) throw err;
      ctx.logger.warn({ walk, shift: err.shift }, 'backups list shifted while paged; walking it again');
    }
  }
}

/**
 * One app's backups, newest first, a few at a time until they settle it (see `settledBy`), the
 * list ends, or {@link PER_APP_PAGES} pages were read: then `stopped: 'bound'`, as when the app's
 * list moved between two pages (`total` changed: a backup may have been skipped).
 */
async function readOneApp(
  ctx: CollectorContext,
  query: { namespace?: string },
  appId: number,
  states: BackupStates,
  horizon: number,
  history: number,
): Promise<BackupsSeen | undefined> {
  let seen: BackupsSeen | undefined;
  let total: number | undefined;
  for (let page = 0; page < PER_APP_PAGES; page++) {
    const offset = page * PER_APP_LIMIT;
    const answer = await ctx.client.backups.list(
      { ...query, app_id: appId, limit: PER_APP_LIMIT, offset },
      { signal: ctx.signal, view: newestBackupView, quarantine: ctx.quarantine },
    );
    if (total !== undefined && answer.total !== total) return seen && { ...seen, stopped: 'bound' };
    total = answer.total;
    for (const backup of answer.items) {
      if (backup.app_id !== appId) continue;
      seen = seeBackup(seen, backup, states, history);
      if (settledBy(seen, backup, horizon, history) !== null) return seen;
    }
    if (answer.items.length < PER_APP_LIMIT || offset + answer.items.length >= total) return seen;
  }
  return seen && { ...seen, stopped: 'bound' };
}
