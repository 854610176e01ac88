import { ApiError } from '../api/errors.js';
import type { Run, RunListItem } from '../api/schemas.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { readApps } from './read-apps.js';
import type { RunsSnapshot } from './snapshot.js';

/**
 * Reads the `runs` job's snapshot:
 * - `runs.list`, newest first, stopping at the first run created before `checks.failed_runs.lookback`
 *   (the list is ordered by creation, so everything after it is older still: a few pages, not all);
 * - plus every run still in an active state, however old, read with the `state` filter: a run stuck
 *   for longer than the look-back must stay in view, or its stuck alert would resolve by ageing out;
 * - `runs.get` of each run in a failed or active state, `api.concurrency` at a time, for steps and
 *   watcher;
 * - `apps.list` for labels and links.
 * Any failed read throws; there is no partial snapshot.
 */
export async function collectRuns(ctx: CollectorContext): Promise<RunsSnapshot> {
  const { client, checks, signal } = ctx;
  const since = ctx.now - checks.failed_runs.lookback;
  const activeStates = checks.stuck_runs.active_states;

  const recent = await readAcrossNamespaces(ctx, (namespace) =>
    client.runs.listAll(namespace === undefined ? {} : { namespace }, { signal, until: (run) => createdBefore(run, since) }),
  );
  const byId = new Map<number, RunListItem>(recent.map((r) => [r.id, r]));
  for (const state of activeStates) {
    const active = await readAcrossNamespaces(ctx, (namespace) =>
      client.runs.listAll(namespace === undefined ? { state } : { state, namespace }, { signal }),
    );
    for (const run of active) if (!byId.has(run.id)) byId.set(run.id, run);
  }
  const runs = [...byId.values()].sort(newestFirst);

  const wanted = new Set([...checks.failed_runs.failed_states, ...activeStates]);
  const toDetail = runs.filter((r) => wanted.has(r.state));
  const detailed = await mapLimit(toDetail, ctx.concurrency, async (run) => {
    try {
      return await client.runs.get(run.id, { signal });
    } catch (err) {
      // Gone between the list and the read: judged from its list item, as the snapshot allows.
      if (err instanceof ApiError && err.code === 'not_found') return undefined;
      throw err;
    }
  });
  const details = new Map<number, Run>();
  for (const run of detailed) if (run) details.set(run.id, run);

  const apps = await readApps(ctx);
  ctx.logger.debug({ runs: runs.length, details: details.size, apps: apps.size }, 'runs read');
  return { job: 'runs', takenAt: ctx.now, runs, details, apps };
}

function createdBefore(run: RunListItem, since: number): boolean {
  const created = run.created_at === null ? NaN : Date.parse(run.created_at);
  return Number.isFinite(created) && created < since;
}

/** Newest first by creation, then by id, so runs merged from several namespaces read in one order. */
function newestFirst(a: RunListItem, b: RunListItem): number {
  const ta = timeOf(a.created_at);
  const tb = timeOf(b.created_at);
  if (ta !== tb) return tb > ta ? 1 : -1;
  return b.id - a.id;
}

/** A timestamp in ms; an unknown one sorts last. */
function timeOf(text: string | null): number {
  const t = text === null ? NaN : Date.parse(text);
  return Number.isFinite(t) ? t : -Infinity;
}
