import type { Run, RunListItem } from '../api/schemas.js';
import { ApiError, ApiResponseError, ApiTransportError } from '../api/errors.js';
import { isNewer, orderKey, sortNewestFirst, type OrderKey } from '../lib/newest-first.js';
import { parseTime } from '../lib/parse-time.js';
import type { CollectorContext } from './collector-context.js';
import { mapLimit } from './map-limit.js';
import { readAcrossNamespaces } from './read-across-namespaces.js';
import { readApps } from './read-apps.js';
import { readById } from './read-by-id.js';
import { groupKey, SettledRunSummary } from './settled-runs.js';
import type { RunsMemory } from './runs-memory.js';
import { StateWordTally } from './state-word-tally.js';
import type { RunsSnapshot } from './snapshot.js';

/**
 * Runs read by id in one cycle with a memory, at most (4 s at the default 10 requests/s): past it,
 * a storm of new failures is announced from the lists at once, and the details of the rest follow
 * in their alerts' context and the next cycles.
 */
export const DETAIL_READS_PER_CYCLE = 40;

/**
 * Failed runs a remediation policy waits on (`CollectorContext.detailWanted`) read by id in one
 * cycle beyond {@link DETAIL_READS_PER_CYCLE}, at most (20 s at the default 10 requests/s, and
 * only while such a policy is in force): the policy decides in the cycle that announces them,
 * rather than a cycle per 40 failures. Past it, the context reader and the next cycles read the rest.
 */
export const POLICY_DETAIL_READS_PER_CYCLE = 200;

/** The checks whose open alerts are about a run that must stay in view until it is decided. */
const FOLLOWED_CHECKS: ReadonlySet<string> = new Set(['failed_runs', 'stuck_runs']);
/** The check whose open alerts' details failed_runs reads again (`RunsSnapshot.openFailures`). */
const FAILED_RUNS: ReadonlySet<string> = new Set(['failed_runs']);

/**
 * Reads the `runs` job's snapshot. Without a memory (`ctx.runsMemory`), or without relevance, the
 * whole look-back window each time:
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
 *
 * With a memory, a cycle reads what changed since the last (`runsToDetail`, below). Any failed
 * read throws. A read cut by a hard bound (`jobs.read_ceiling`, `api.max_list_items`,
 * `api.max_answer_size`) leaves what it read so far in `ctx.soFar` ({@link runsSoFar}).
 * A run that cannot be read by id, or whose list item cannot be read, is set aside in
 * `ctx.quarantine` (its alerts held).
 */
export async function collectRuns(ctx: CollectorContext): Promise<RunsSnapshot> {
  const memory = ctx.relevance ? ctx.runsMemory : undefined;
  const read = await readRuns(ctx, memory);
  const { byId, details, followed, settled, stateWords, wanted } = read;
  const runs = sortNewestFirst([...byId.values()]);

  if (memory) {
    // Every list was read to its end: what they said is kept for the next cycle.
    memory.walked(read.newestCreated);
    // The cycle's settled runs merged in: the newest of each group wins.
    for (const [key, run] of read.settled?.newest ?? []) memory.settled.keep(key, run);
    memory.pruneSettled(ctx.now - ctx.checks.failed_runs.lookback);
  }
  const { queue, decisive } = memory
    ? runsToDetail(ctx, memory, runs, details, followed, wanted)
    : { queue: runs.filter((r) => wanted.has(r.state) && !details.has(r.id)), decisive: Infinity };
  const detailsBy = ctx.detailsBy?.();
  await mapLimit(queue, ctx.concurrency, async (item, i) => {
    let run: Run | undefined;
    try {
      run = await getUnlessGone(ctx, item.id, 'unreadable', i < decisive ? undefined : detailsBy);
    } catch (err) {
      if (i < decisive || !notInTime(err)) throw err;
      // Announced from its list item; read here next cycle, or by its alert's context reader.
      memory?.awaiting.set(item.id, item.updated_at);
      return;
    }
    // Kept as each comes (a cut read keeps those done). Gone between the list and the read:
    // judged from its list item, as the snapshot allows.
    if (!run) return;
    details.set(run.id, run);
    memory?.remember(run);
  });

  // Labels only for the runs that can be findings: those in a failed or active state, and those
  // with a detail (a watcher can fail or wait whatever the run's own state says).
  const labelled = new Set<number>();
  for (const run of runs)
    if (run.app_id !== null && (wanted.has(run.state) || details.has(run.id))) labelled.add(run.app_id);
  const apps = await readApps(ctx, labelled);
  const settledNewest = memory ? new Map(memory.settled.newest) : settled?.newest;
  ctx.logger.debug(
    { runs: runs.length, settledGroups: settledNewest?.size, details: details.size, apps: apps.size },
    'runs read',
  );
  return {
    job: 'runs',
    takenAt: ctx.now,
    stateWords: [stateWords],
    runs,
    ...(settledNewest && { settledNewest }),
    details,
    openFailures: openRuns(ctx, FAILED_RUNS),
    apps,
  };
}

/**
 * What the lists (and the reads by id of followed runs) brought, before details. The lists: the
 * walk of every run (down to the look-back, or with a memory down to the newest run it saw,
 * `RunsMemory.walkStop`), with a memory the failed states' lists within the look-back, the active
 * states' lists, then the runs that left those lists since the last cycle and the followed runs,
 * by id.
 */
async function readRuns(ctx: CollectorContext, memory: RunsMemory | undefined) {
  const { client, checks } = ctx;
  const since = ctx.now - checks.failed_runs.lookback;
  const activeStates = checks.stuck_runs.active_states;
  // The failed and active state words.
  const wanted: ReadonlySet<string> = new Set([...checks.failed_runs.failed_states, ...activeStates]);

  // Given what the checks can report (`ctx.relevance`), the window's settled runs are summarised
  // as they are read instead of kept: ~20,000 of 23,500 runs at 10,000 apps.
  const settled = ctx.relevance ? new SettledRunSummary() : undefined;
  const followed = new Set(openRuns(ctx, FOLLOWED_CHECKS).keys());
  const stateWords = new StateWordTally('run');
  const details = new Map<number, Run>();
  // What a hard bound's cut leaves to announce ({@link runsSoFar}): the runs kept and details read so far.
  const soFar = runsSoFar(ctx, { stateWords, settled, details, openFailures: openRuns(ctx, FAILED_RUNS) });
  // The newest creation time the walk read.
  let newestCreated: number | undefined;
  const keep = (run: RunListItem) => {
    stateWords.see(run.state);
    const created = parseTime(run.created_at);
    if (created !== null && !(created <= (newestCreated ?? -Infinity))) newestCreated = created;
    if (!settled || wanted.has(run.state) || followed.has(run.id)) {
      soFar.set(run.id, run);
      return true;
    }
    settled.add(run);
    return false;
  };
  const walkStop = memory ? memory.walkStop(since) : since;
  const recent = await readAcrossNamespaces(ctx, (query, opts) =>
    client.runs.listAll(query, { ...opts, until: (run) => createdBefore(run, walkStop), keep }),
  );
  const byId = new Map<number, RunListItem>(recent.map((r) => [r.id, r]));
  // With a memory the walk stopped short of the look-back: the runs that failed within it are
  // read through the state filter (a run created long ago may have failed a minute ago).
  type StateList = { state: string; until?: (run: RunListItem) => boolean };
  const listed: StateList[] = [
    ...(memory
      ? checks.failed_runs.failed_states.map((state) => ({ state, until: (r: RunListItem) => createdBefore(r, since) }))
      : []),
    ...activeStates.map((state) => ({ state })),
  ];
  for (const { state, until } of listed) {
    const runs = await readAcrossNamespaces(ctx, (query, opts) =>
      client.runs.listAll({ state, ...query }, { ...opts, ...(until && { until }) }),
    );
    // The state list is read after the walk: what it says is the newer.
    for (const run of runs) {
      soFar.set(run.id, run);
      byId.set(run.id, run);
    }
  }
  if (memory) await readLeftTheirState(ctx, memory, byId, followed, wanted, since);

  for (const run of await readFollowed(ctx, followed, byId)) {
    byId.set(run.id, run);
    details.set(run.id, run);
  }
  for (const run of await readNewerOfApps(ctx, [...details.values()], byId)) byId.set(run.id, run);
  return { byId, details, followed, settled, stateWords, wanted, newestCreated };
}

/**
 * The runs in a failed or active state last cycle that are in neither list now (nor followed, nor
 * aged out of the look-back): they have settled, so their `updated_at` has moved. Each is read by
 * id, once: a settled one counts in the memory's settled runs (it supersedes the older failures of
 * its app and action, which the walk, stopping at newer runs, would not see again); one back in a
 * listed state since the lists were read is put in view.
 */
async function readLeftTheirState(
  ctx: CollectorContext,
  memory: RunsMemory,
  byId: Map<number, RunListItem>,
  followed: ReadonlySet<number>,
  wanted: ReadonlySet<string>,
  since: number,
): Promise<void> {
  const left = [...memory.wanted.values()].filter(
    (run) => !byId.has(run.id) && !followed.has(run.id) && !createdBefore(run, since),
  );
  for (const run of await mapLimit(left, ctx.concurrency, (run) => getUnlessGone(ctx, run.id, 'gone'))) {
    if (!run) continue;
    if (wanted.has(run.state)) byId.set(run.id, run);
    // Counted in as a settled run read by id (it left the failed and active lists).
    else memory.settled.add(run);
  }
}

/**
 * The runs to read by id (`runs.get`) in one cycle with a memory, with the details it already
 * knows put in `details`: a run is read only when what it says can change a finding and is not
 * known yet (the collector keeps each it reads in the memory, `RunsMemory.remember`).
 * - A run whose remembered detail still has its `updated_at` is not read again (unless its watcher
 *   waits: its progress moves without the run's `updated_at`).
 * - A failure superseded by a newer settled run of its app and action is never read: it cannot be
 *   a finding.
 * - A failure not known at its `updated_at` (new, or retried and failed again) is read, at most
 *   {@link DETAIL_READS_PER_CYCLE} a cycle: the failures open alerts are about first (after a
 *   restart, so their alerts keep saying the step), then those a remediation policy waits on (it
 *   matches on the failed step's reason: up to {@link POLICY_DETAIL_READS_PER_CYCLE} more), then
 *   those announced without their detail in an earlier cycle, then the newest (production's
 *   first). The rest are announced from their list item: their alerts'
 *   context reader reads them after the cycle (`RunsMemory.remember`), and the next cycle's finding
 *   says their step and reason, so a storm of failures never holds up the cycle that announces it.
 * - A run still going is read only once it is old enough to be stuck (stuck_runs), or when an open
 *   alert follows it (a failed run retried: its alert says from which step): before that its steps
 *   and watcher can change nothing said.
 * The first `decisive` runs of the queue (followed, or old enough to be stuck) are read whatever
 * the time; the others by `ctx.detailsBy`, or left to the next cycle and the context reader.
 */
function runsToDetail(
  ctx: CollectorContext,
  memory: RunsMemory,
  runs: readonly RunListItem[],
  details: Map<number, Run>,
  followed: ReadonlySet<number>,
  wanted: ReadonlySet<string>,
): { queue: RunListItem[]; decisive: number } {
  const failedStates = new Set(ctx.checks.failed_runs.failed_states);
  const stuckAfter = ctx.checks.stuck_runs.enabled ? ctx.checks.stuck_runs.max_duration : Infinity;
  const supersedes = newestSettledByGroup(memory, runs, wanted);
  // In the order they are read: followed and stuck, awaited by a policy, announced before, new
  // (runs are newest first).
  const first: RunListItem[] = [];
  const forPolicy: RunListItem[] = [];
  const announced: RunListItem[] = [];
  const fresh: RunListItem[] = [];
  for (const run of runs) {
    if (details.has(run.id)) continue;
    if (!wanted.has(run.state)) continue;
    const failed = failedStates.has(run.state);
    const known = memory.currentDetail(run);
    const stuckAge = !failed && couldBeStuck(run, ctx.now, stuckAfter);
    if (known && !(stuckAge && known.watcher?.state === 'waiting')) {
      details.set(run.id, known);
      continue;
    }
    if (failed) {
      const newer = supersedes.get(groupKey(run));
      if (newer && isNewer(newer, orderKey(run))) continue;
      if (followed.has(run.id)) first.push(run);
      else if (ctx.detailWanted?.(run)) forPolicy.push(run);
      else if (memory.awaiting.has(run.id) && memory.awaiting.get(run.id) === run.updated_at) announced.push(run);
      else fresh.push(run);
    } else if (stuckAge || followed.has(run.id)) {
      // Followed: a failed run an alert is about, running again after a retry: its step is news.
      first.push(run);
    }
  }
  // Production's new failures first: theirs are the alerts that page, and should say their step.
  fresh.sort((a, b) => Number(b.environment_type === 'production') - Number(a.environment_type === 'production'));
  const queue = [...first, ...forPolicy, ...announced, ...fresh];
  const bound = DETAIL_READS_PER_CYCLE + Math.min(forPolicy.length, POLICY_DETAIL_READS_PER_CYCLE);
  // Announced from their list item this cycle: read by the context reader, or here next cycle.
  for (const run of queue.slice(bound)) memory.awaiting.set(run.id, run.updated_at);
  memory.wanted = new Map(runs.filter((r) => wanted.has(r.state)).map((r) => [r.id, r]));
  memory.retain(new Set(runs.map((r) => r.id)));
  memory.retainSettled(new Set(runs.map(groupKey)));
  return { queue: queue.slice(0, bound), decisive: first.length };
}

/**
 * The newest settled run of each group: the memory's, and the settled runs in view (followed ones),
 * those in none of the `wanted` (failed or active) states.
 */
function newestSettledByGroup(
  memory: RunsMemory,
  runs: readonly RunListItem[],
  wanted: ReadonlySet<string>,
): Map<string, OrderKey> {
  const out = new SettledRunSummary(memory.settled.newest);
  for (const run of runs) if (!wanted.has(run.state)) out.add(run);
  return out.newest;
}

/** Whether a run still going is old enough (by its creation) to be stuck; unknown creation: it may be. */
function couldBeStuck(run: RunListItem, now: number, stuckAfterMs: number): boolean {
  const created = parseTime(run.created_at);
  return created === null || now - created > stuckAfterMs;
}

/** The runs the open alerts of `checks` are about, with what each alert last said of its run (its details). */
function openRuns(ctx: CollectorContext, checks: ReadonlySet<string>): Map<number, Readonly<Record<string, string>>> {
  const told = new Map<number, Readonly<Record<string, string>>>();
  for (const { check, subject, details } of ctx.openSubjects ?? []) {
    if (checks.has(check) && subject.type === 'run' && subject.id !== undefined) told.set(subject.id, details ?? {});
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
  deadline?: number,
): Promise<Run | undefined> {
  return readById(ctx, 'runs.get', id, () => ctx.client.runs.get(id, { signal: ctx.signal, deadline }), notFound);
}

/**
 * Whether a read by id for a run's details failed for want of time: no answer within the request's
 * time limit or by `ctx.detailsBy`, or 429s past the client's retries. Such details only add to
 * what the lists say, and a service slow to answer them, or one refusing them (the client then
 * waits up to a minute between tries), must not hold the announcement of the failures the lists
 * show.
 */
function notInTime(err: unknown): boolean {
  if (err instanceof ApiTransportError) return err.reason === 'deadline' || err.reason === 'timeout';
  return (err instanceof ApiError || err instanceof ApiResponseError) && err.status === 429;
}

/** Created before `since`; a run whose creation time is unknown is never where a walk stops. */
function createdBefore(run: RunListItem, since: number): boolean {
  const created = parseTime(run.created_at);
  return created !== null && created < since;
}

/**
 * The runs job's read so far, offered to `ctx.soFar` (`read-so-far.ts`), so a read cut by a hard
 * bound still announces the failures it saw: the runs listed and kept until the cut, newest first,
 * the settled runs summarised until then (a newer settled run still supersedes an older failure:
 * the list is newest first, so a failure read was read after anything newer of its group), and the
 * details read by then. No apps: labels come from the runs themselves (a run carries its project
 * and environment type), and the complete read that follows adds the app's name and links.
 * Answers the map the collector adds each run it keeps from a list to; `details` is the
 * collector's own map, filled as each `runs.get` comes back.
 */
function runsSoFar(
  ctx: Pick<CollectorContext, 'soFar' | 'now'>,
  parts: {
    stateWords: StateWordTally;
    settled: SettledRunSummary | undefined;
    details: ReadonlyMap<number, Run>;
    /** What each open failed_runs alert last said of its run: a cut read follows lineage too. */
    openFailures: RunsSnapshot['openFailures'];
  },
): Map<number, RunListItem> {
  const listed = new Map<number, RunListItem>();
  ctx.soFar?.offer(() => {
    if (listed.size === 0 && parts.details.size === 0) return undefined;
    const runs = new Map<number, RunListItem>(listed);
    for (const [id, run] of parts.details) if (!runs.has(id)) runs.set(id, run);
    return {
      job: 'runs',
      takenAt: ctx.now,
      stateWords: [parts.stateWords],
      runs: sortNewestFirst([...runs.values()]),
      ...(parts.settled && { settledNewest: new Map(parts.settled.newest) }),
      details: new Map(parts.details),
      apps: new Map(),
      ...(parts.openFailures && { openFailures: parts.openFailures }),
    };
  });
  return listed;
}
