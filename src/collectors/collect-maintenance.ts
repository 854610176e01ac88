import { ApiError } from '../api/errors.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { MaintenanceSnapshot } from './snapshot.js';
import { appIdView, maintenanceAppView, type MaintenanceApp } from './views.js';

/**
 * Reads the `maintenance` job's snapshot: `apps.get` of every app of `apps.list`, `api.concurrency`
 * at a time (only the full app carries the maintenance flag and the repositories), each answer read
 * through the {@link MaintenanceApp} view so the rest of it is garbage at once, and kept only when
 * an enabled check could report it (`ctx.relevance`: in maintenance, a branch deleted upstream or
 * behind). An app deleted between the list and its read is left out; any other failed read fails
 * the snapshot.
 */
export async function collectMaintenance(ctx: CollectorContext): Promise<MaintenanceSnapshot> {
  const listed = await readAcrossNamespaces(ctx, (namespace) =>
    ctx.client.apps.listAll(namespace === undefined ? {} : { namespace }, { signal: ctx.signal, view: appIdView }),
  );
  const keep = ctx.relevance?.maintenance;
  const read = await mapLimit(listed, ctx.concurrency, async ({ id }) => {
    try {
      const app = await ctx.client.apps.get(id, { signal: ctx.signal, view: maintenanceAppView });
      return !keep || keep(app) ? app : undefined;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return undefined;
      throw err;
    }
  });
  const apps = read.filter((a): a is MaintenanceApp => a !== undefined);
  ctx.logger.debug({ apps: apps.length }, 'apps read in full');
  return { job: 'maintenance', takenAt: ctx.now, apps };
}
