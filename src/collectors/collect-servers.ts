import type { EnvironmentType } from '../api/schemas.js';
import { permissionDenial } from '../api/describe-error.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import type { ServersSnapshot } from './snapshot.js';
import { StateWordTally } from './state-word-tally.js';
import { appEnvironmentView } from './views.js';

/**
 * Reads the `servers` job's snapshot: every record of `servers.list` (all pages, every configured
 * namespace); a server carries its own `app_count`. For each server in a bad state with apps on it
 * (rare: usually none), the environment types of those apps, `apps.list?server_id=…` (a page or
 * two each, `api.concurrency` at a time), so a server's alert can page like its apps: nothing is
 * read while every server is fine. A token that may not list apps leaves them unread
 * (`appsUnread`) rather than fail the job: the server's own alert matters most when its apps
 * cannot be judged. Any other failed read fails the snapshot.
 */
export async function collectServers(ctx: CollectorContext): Promise<ServersSnapshot> {
  const servers = await readAcrossNamespaces(ctx, (query, opts) => ctx.client.servers.listAll(query, opts));
  const config = ctx.checks.servers;
  const bad = config.enabled ? servers.filter((s) => config.bad_states.includes(s.state) && s.app_count > 0) : [];
  const appEnvironments = new Map<number, readonly (EnvironmentType | null)[]>();
  let appsUnread: string | undefined;
  try {
    const read = await mapLimit(bad, ctx.concurrency, (server) =>
      ctx.client.apps.listAll(
        // Within the configured namespaces, as every other read: the server's own.
        ctx.namespaces === null ? { server_id: server.id } : { server_id: server.id, namespace: server.namespace },
        { signal: ctx.signal, view: appEnvironmentView, readAhead: false, quarantine: ctx.quarantine },
      ),
    );
    const environmentsOf = (i: number) => read[i]!.map((app) => app.environment_type);
    for (const [i, server] of bad.entries()) appEnvironments.set(server.id, environmentsOf(i));
  } catch (err) {
    // The token may not list apps, which the servers job does not otherwise need.
    const denied = permissionDenial(err);
    if (!denied) throw err;
    appsUnread = `apps.list answered ${denied.code}`;
    appEnvironments.clear();
    ctx.logger.warn(
      { code: denied.code },
      'cannot list the apps on servers in a bad state (deployment_app: read): their alerts stay critical, without an environment',
    );
  }
  const stateWords = new StateWordTally('server');
  for (const server of servers) stateWords.see(server.state);
  ctx.logger.debug({ servers: servers.length, bad: bad.length }, 'servers read');
  return {
    job: 'servers',
    takenAt: ctx.now,
    stateWords: [stateWords],
    servers,
    appEnvironments,
    ...(appsUnread && { appsUnread }),
  };
}
