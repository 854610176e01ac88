import type { Run, RunListItem } from '../api/schemas.js';
import { sortNewestFirst } from '../lib/newest-first.js';
import { parseTime } from '../lib/parse-time.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { readApps } from './read-apps.js';
import { readById } from './read-by-id.js';
import { runsSoFar } from './runs-so-far.js';
import { SettledRunSummary } from './settled-runs.js';
import { StateWordTally } from './state-word-tally.js';
import type { RunsSnapshot } from './snapshot.js';

/** The checks whose open alerts are about a run that must stay in view until it is decided. */
const FOLLOWED_CHECKS: ReadonlySet<string> = new Set(['failed_runs', 'stuck_runs']);

/**
 * Reads the `runs` job's snapshot:
 * - `runs.list`, newest first, stopping at the first run created before `checks.failed_runs.lookback`
 *   (the list is ordered by creation, so everything after it is older still: a few pages, not all);
 *   with `ctx.relevance`, its settled runs (neither failed nor active, and no open alert's) are
 *   summarised per app and action as read (`settledNewest`), not kept;
 * - plus every run still in an active state, however old, read with the `state` filter: a run stuck
 *   for longer than the look-back must stay in view, or its stuck alert would resolve by ageing out;
 * - plus, by id (`runs.get`), every run an open failed_runs or stuck_runs alert is about that the
 *   window left out, and the runs of its app since it (`runs.list?app_id=…`, newest first, down to
 *   that run): a failure older than the look-back stays failed until the run itself, or a newer
 *   settled run of the same app and action, says otherwise; it never resolves by ageing out. A run
 *   that `runs.get` no longer finds is gone, and its alert resolves; one it refuses
 *   (`access_denied`: reads by id are graded by the run's environment) is set aside, its alert held;
 * - `runs.get` of each other run in a failed or active state, `api.concurrency` at a time, for
 *   steps and watcher;
 * - `apps.list` for the labels and links of the runs that can be findings;
 * - and, from the alert state, what each open failed_runs alert last said of its run (`openFailures`).
 * Any failed read throws. A read cut by a hard bound (`jobs.read_ceiling`, `api.max_list_items`,
 * `api.max_answer_size`) leaves what it read so far in `ctx.soFar` (`runs-so-far.ts`).
 * A run that cannot be read by id, or whose list item cannot be read, is set aside in
 * `ctx.quarantine` (its alerts held).
 */
export async function collectRuns(ctx: CollectorContext): Promise<RunsSnapshot> {
  const { client, checks, signal } = ctx;
  const since = ctx.now - checks.failed_runs.lookback;
  const activeStates = checks.stuck_runs.active_states;
  const wanted = new Set([...checks.failed_runs.failed_states, ...activeStates]);

  // Given what the checks can report (`ctx.relevance`), the window's settled runs are summarised
  // as they are read instead of kept: ~20,000 of 23,500 runs at 10,000 apps.
  const settled = ctx.relevance ? new SettledRunSummary() : undefined;
  const followed = followedRunIds(ctx);
  const stateWords = new StateWordTally('run');
  const details = new Map<number, Run>();
  // What a hard bound's cut leaves to announce (`runs-so-far.ts`): the runs kept and details read so far.
  const failures = openFailures(ctx);
  const listed = runsSoFar(ctx, { stateWords, settled, details, openFailures: failures });
  const keep = (run: RunListItem) => {
    stateWords.see(run.state);
    if (!settled || wanted.has(run.state) || followed.has(run.id)) {
      listed.set(run.id, run);
      return true;
    }
    settled.add(run);
    return false;
  };
  const recent = await readAcrossNamespaces(ctx, (namespace) =>
    client.runs.listAll(namespace === undefined ? {} : { namespace }, {
      signal,
      until: (run) => createdBefore(run, since),
      keep,
      quarantine: ctx.quarantine,
    }),
  );
  const byId = new Map<number, RunListItem>(recent.map((r) => [r.id, r]));
  for (const state of activeStates) {
    const active = await readAcrossNamespaces(ctx, (namespace) =>
      client.runs.listAll(namespace === undefined ? { state } : { state, namespace }, {
        signal,
        quarantine: ctx.quarantine,
      }),
    );
    for (const run of active) {
      listed.set(run.id, run);
      if (!byId.has(run.id)) byId.set(run.id, run);
    }
  }

  for (const run of await readFollowed(ctx, followed, byId)) {
    byId.set(run.id, run);
    details.set(run.id, run);
  }
  for (const run of await readNewerOfApps(ctx, [...details.values()], byId)) byId.set(run.id, run);
  const runs = sortNewestFirst([...byId.values()]);

  const toDetail = runs.filter((r) => wanted.has(r.state) && !details.has(r.id));
  await mapLimit(toDetail, ctx.concurrency, async (item) => {
    const run = await getUnlessGone(ctx, item.id, 'unreadable');
    // Kept as each comes (a cut read keeps those done). Not read (set aside: its alerts are held):
    // judged from its list item, as the snapshot allows.
    if (run) details.set(run.id, run);
  });

  // Labels only for the runs that can be findings: those in a failed or active state, and those
  // with a detail (a watcher can fail or wait whatever the run's own state says).
  const labelled = new Set<number>();
  for (const run of runs)
    if (run.app_id !== null && (wanted.has(run.state) || details.has(run.id))) labelled.add(run.app_id);
  const apps = await readApps(ctx, labelled);
  ctx.logger.debug(
    { runs: runs.length, settledGroups: settled?.newest.size, details: details.size, apps: apps.size },
    'runs read',
  );
  return {
    job: 'runs',
    takenAt: ctx.now,
    stateWords,
    runs,
    ...(settled && { settledNewest: settled.newest }),
    details,
    openFailures: failures,
    apps,
  };
}

/** The runs that open failed_runs and stuck_runs alerts are about. */
function followedRunIds(ctx: CollectorContext): Set<number> {
  const ids = new Set<number>();
  for (const { check, subject } of ctx.openSubjects ?? []) {
    if (FOLLOWED_CHECKS.has(check) && subject.type === 'run' && subject.id !== undefined) ids.add(subject.id);
  }
  return ids;
}

/** What the open failed_runs alerts last said of their runs (their details), by run id. */
function openFailures(ctx: CollectorContext): Map<number, Readonly<Record<string, string>>> {
  const told = new Map<number, Readonly<Record<string, string>>>();
  for (const { check, subject, details } of ctx.openSubjects ?? []) {
    if (check === 'failed_runs' && subject.type === 'run' && subject.id !== undefined)
      told.set(subject.id, details ?? {});
  }
  return told;
}

/** `runs.get` of the `followed` runs (open alerts are about them) that the lists above did not bring. */
async function readFollowed(
  ctx: CollectorContext,
  followed: ReadonlySet<number>,
  listed: ReadonlyMap<number, RunListItem>,
): Promise<Run[]> {
  const ids = [...followed].filter((id) => !listed.has(id));
  const read = await mapLimit(ids, ctx.concurrency, (id) => getUnlessGone(ctx, id, 'gone'));
  return read.filter((run): run is Run => run !== undefined);
}

/**
 * The runs of each followed run's app created since the oldest followed run of that app, newest
 * first: the ones that may supersede it (same app and action, settled since). Bounded by that run:
 * the walk stops at the first run created before it.
 */
async function readNewerOfApps(
  ctx: CollectorContext,
  followed: readonly Run[],
  listed: ReadonlyMap<number, RunListItem>,
): Promise<RunListItem[]> {
  const oldestByApp = new Map<number, number>();
  for (const run of followed) {
    const created = parseTime(run.created_at);
    if (run.app_id === null || created === null) continue;
    oldestByApp.set(run.app_id, Math.min(created, oldestByApp.get(run.app_id) ?? Infinity));
  }
  const lists = await mapLimit([...oldestByApp], ctx.concurrency, ([appId, oldest]) =>
    // Already `concurrency` walks at a time: no page ahead, or twice that would be in flight.
    ctx.client.runs.listAll(
      { app_id: appId },
      { signal: ctx.signal, until: (run) => createdBefore(run, oldest), readAhead: false, quarantine: ctx.quarantine },
    ),
  );
  return lists.flat().filter((run) => !listed.has(run.id));
}

/**
 * `runs.get`, or undefined when the run no longer exists (`not_found` for a run no list names:
 * `gone`) or cannot be read now (refused, unreadable, or not found right after a list named it:
 * set aside in `ctx.quarantine`, its alerts held).
 */
async function getUnlessGone(
  ctx: CollectorContext,
  id: number,
  notFound: 'gone' | 'unreadable',
): Promise<Run | undefined> {
  return readById(ctx, 'runs.get', id, () => ctx.client.runs.get(id, { signal: ctx.signal }), notFound);
}

/** Created before `since`; a run whose creation time is unknown is never where a walk stops. */
function createdBefore(run: RunListItem, since: number): boolean {
  const created = parseTime(run.created_at);
  return created !== null && created < since;
}
