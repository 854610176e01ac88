import { ApiError } from '../api/errors.js';
import type { App } from '../api/schemas.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readApps } from './read-apps.js';
import type { MaintenanceApp, MaintenanceSnapshot } from './snapshot.js';

/**
 * Reads the `maintenance` job's snapshot: `apps.get` of every app of `apps.list`, `api.concurrency`
 * at a time (only the full app carries the maintenance flag), each answer cut to the
 * {@link MaintenanceApp} fields as it arrives so the rest of it is garbage at once. An app deleted
 * between the list and its read is left out; any other failed read fails the snapshot.
 */
export async function collectMaintenance(ctx: CollectorContext): Promise<MaintenanceSnapshot> {
  const listed = [...(await readApps(ctx)).keys()];
  const read = await mapLimit(listed, ctx.concurrency, async (id) => {
    try {
      return maintenanceFields(await ctx.client.apps.get(id, { signal: ctx.signal }));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return undefined;
      throw err;
    }
  });
  const apps = read.filter((a): a is MaintenanceApp => a !== undefined);
  ctx.logger.debug({ apps: apps.length }, 'apps read in full');
  return { job: 'maintenance', takenAt: ctx.now, apps };
}

function maintenanceFields(app: App): MaintenanceApp {
  const { id, name, namespace, project, environment_type, state, server, url, maintenance } = app;
  return { id, name, namespace, project, environment_type, state, server, url, maintenance };
}
