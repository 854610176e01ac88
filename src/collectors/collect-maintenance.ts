import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { CYCLE_WINDOW_MS } from './shared-apps.js';
import { readById } from './read-by-id.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { AppInFull, MaintenanceSnapshot } from './snapshot.js';
import { StateWordTally } from './state-word-tally.js';
import { appIdView, maintenanceAppView, restorePointView, type NewestRestorePoint } from './views.js';

/**
 * Restore points read per app: one small page of the newest. The point an app is held at is the
 * one it was rolled back to, and its auto-updates wait while it is held, so few changes come after
 * it; a point held further down than this is not seen.
 */
export const RESTORE_POINTS_PER_APP = 5;

/**
 * Reads the `maintenance` job's snapshot: `apps.get` of every app of `apps.list`, `api.concurrency`
 * at a time (only the full app carries the maintenance flag, the repositories and the open
 * upgrade), each answer read through the `MaintenanceApp` view so the rest of it is garbage
 * at once. When an enabled check asks for them (`ctx.extraReads`: restore_points does), each
 * app's newest restore points too (`restore_points.list?limit=5`, one more request per app: no
 * other answer carries them). An app
 * is kept only when an enabled check could report it (`ctx.relevance`: in maintenance, a branch
 * deleted upstream or behind, an upgrade failed or in standby, a restore point held). An app
 * deleted between the list and its reads is left out; one the token may not read by id
 * (`access_denied`: graded by its environment) or that cannot be parsed is set aside in
 * `ctx.quarantine`, its alerts held; any other failed read fails the snapshot.
 */
export async function collectMaintenance(ctx: CollectorContext): Promise<MaintenanceSnapshot> {
  // Only the ids: the shared list of this cycle window will do (each app is read in full below).
  const listed = ctx.sharedApps
    ? [...(await ctx.sharedApps.read(ctx, CYCLE_WINDOW_MS)).byId.values()]
    : await readAcrossNamespaces(ctx, (query, opts) => ctx.client.apps.listAll(query, { ...opts, view: appIdView }));
  const keep = ctx.relevance?.maintenance;
  const withPoints = ctx.extraReads?.has('restore_points') ?? false;
  // The open upgrades' states, as read (kept or not): the words the upgrades check judges by.
  const stateWords = new StateWordTally('upgrade');
  const read = await mapLimit(listed, ctx.concurrency, async ({ id }): Promise<AppInFull | undefined> => {
    const get = () => ctx.client.apps.get(id, { signal: ctx.signal, view: maintenanceAppView });
    const app = await readById(ctx, 'apps.get', id, get, 'gone');
    if (!app) return undefined;
    if (app.upgrade) stateWords.see(app.upgrade.state);
    const restorePoints = withPoints ? await newestRestorePoints(ctx, id) : undefined;
    const record = { app, restorePoints };
    return !keep || keep(record) ? record : undefined;
  });
  const kept = read.filter((r): r is AppInFull => r !== undefined);
  const restorePoints = new Map<number, readonly NewestRestorePoint[]>();
  for (const { app, restorePoints: points } of kept) if (points) restorePoints.set(app.id, points);
  ctx.logger.debug({ apps: kept.length, withRestorePoints: restorePoints.size }, 'apps read in full');
  return {
    job: 'maintenance',
    takenAt: ctx.now,
    stateWords: [stateWords],
    apps: kept.map((r) => r.app),
    restorePoints,
    // As late as possible, so a failed run alerted during the read counts.
    reported: ctx.reportedElsewhere?.() ?? [],
  };
}

/** The app's newest restore points, one page of {@link RESTORE_POINTS_PER_APP}, newest first. */
async function newestRestorePoints(ctx: CollectorContext, appId: number): Promise<NewestRestorePoint[]> {
  const opts = { signal: ctx.signal, view: restorePointView, quarantine: ctx.quarantine };
  const page = await ctx.client.restorePoints(appId).list({ limit: RESTORE_POINTS_PER_APP }, opts);
  return page.items;
}
