/**
 * One `apps.list` shared by the jobs that read it (runs and urls for labels, backups for each app's
 * backup state, maintenance for the ids it reads in full), owned by the runtime. At 10,000 apps
 * the list is 20 pages of 500: read by each job at each of its cycles it cost ~1,500 requests an
 * hour, most of them by the runs job, which reads it every minute for a handful of labels.
 *
 * Each reader says how old an answer may be for what it does with it:
 * - the backups job judges what the list says of each app (its backup state): the answer of this
 *   cycle window ({@link CYCLE_WINDOW_MS}), so jobs that tick together share one read;
 * - labels (a name, a project, a URL) and the ids of the apps change seldom: {@link LABELS_MAX_AGE_MS},
 *   unless an app asked for is missing (a new app): then the list is read again.
 * A failed read is not kept; readers that ask while a read is under way share it.
 */
import type { ApiClient } from '../api/client.js';
import { Quarantine, type QuarantinedRecord } from '../api/quarantine.js';
import { readAcrossNamespaces, type WalkOptions } from './read-across-namespaces.js';
import { appBackupStateView, type AppBackupState } from './views.js';

/** Jobs whose ticks fall within this much of a read share it (the schedules' finest step, a minute). */
export const CYCLE_WINDOW_MS = 60_000;

/** How old the list may be when only labels and ids are read from it. */
export const LABELS_MAX_AGE_MS = 15 * 60_000;

/** One read of the list: per namespace asked (or `undefined`: every one the token reaches). */
export interface AppsRead {
  at: number;
  /** The namespaces read, joined: a scope changed by a reload or a new whoami reads again. */
  scope: string;
  parts: readonly { namespace: string | undefined; apps: readonly AppBackupState[] }[];
  /** Every app read, by id. */
  byId: ReadonlyMap<number, AppBackupState>;
  /**
   * Apps asked for that this read did not have (deleted, or out of the scope): not a reason to
   * read again before it is too old, or a run of a deleted app would read the list every cycle.
   */
  absent: Set<number>;
  /**
   * The records this read set aside (`api/quarantine.ts`): handed to the quarantine of every job
   * that uses the answer, each time it does, so each holds the alerts of an app it cannot see.
   */
  aside: readonly QuarantinedRecord[];
}

/**
 * What a read of the list needs from the job's cycle (its `CollectorContext` has all of it): the
 * client, the namespaces in scope, the cycle's time and signal, and where bad records go.
 */
export interface AppsReadCycle extends WalkOptions {
  client: ApiClient;
  namespaces: readonly string[] | null;
  now: number;
}

/** The shared `apps.list`, kept between cycles. */
export class SharedApps {
  #last: AppsRead | undefined;
  #pending: Promise<AppsRead> | undefined;

  /**
   * The list, read at most `maxAgeMs` ago (by `ctx.now`), in the scope of `ctx`; read again when
   * older, or when any of `need` is missing from it. The records it set aside go to `ctx.quarantine`.
   */
  async read(ctx: AppsReadCycle, maxAgeMs: number, need: ReadonlySet<number> = new Set()): Promise<AppsRead> {
    const answer = await this.#answer(ctx, maxAgeMs, need);
    for (const record of answer.aside) ctx.quarantine?.add(record);
    return answer;
  }

  async #answer(ctx: AppsReadCycle, maxAgeMs: number, need: ReadonlySet<number>): Promise<AppsRead> {
    const scope = ctx.namespaces === null ? '*' : ctx.namespaces.join('\n');
    const has = (read: AppsRead) => [...need].every((id) => read.byId.has(id) || read.absent.has(id));
    const last = this.#last;
    if (last !== undefined && last.scope === scope && ctx.now - last.at < maxAgeMs && has(last)) return last;
    if (this.#pending) {
      const shared = await this.#pending;
      if (shared.scope === scope && has(shared)) return shared;
    }
    const read = this.#readNow(ctx, scope);
    this.#pending = read;
    try {
      const answer = await read;
      for (const id of need) if (!answer.byId.has(id)) answer.absent.add(id);
      this.#last = answer;
      return answer;
    } finally {
      if (this.#pending === read) this.#pending = undefined;
    }
  }

  async #readNow(ctx: AppsReadCycle, scope: string): Promise<AppsRead> {
    // Kept with the answer: a job sharing it no more sees a bad app than the one that read it, and
    // an app it does not see is not gone (its alerts held, not resolved as "gone from the service").
    const aside = new Quarantine();
    const parts = await readAcrossNamespaces({ ...ctx, quarantine: aside }, async (query, opts, namespace) => [
      { namespace, apps: await ctx.client.apps.listAll(query, { ...opts, view: appBackupStateView }) },
    ]);
    const words = new Map<string, string>();
    const byId = new Map<number, AppBackupState>();
    const compacted = parts.map(({ namespace, apps }) => ({ namespace, apps: apps.map((app) => compact(app, words)) }));
    for (const part of compacted) for (const app of part.apps) byId.set(app.id, app);
    return { at: ctx.now, scope, parts: compacted, byId, absent: new Set(), aside: aside.records() };
  }
}

/**
 * One app of the list as it is kept between cycles: the words thousands of apps repeat (namespace,
 * project, environment type, server, state, backup health) shared among them instead of one copy
 * per app as JSON.parse gives them, in an object of one fixed shape (the view's parse adds its
 * fields one by one, to an object with a separate property store). At 10,000 apps the list is the
 * largest thing the daemon keeps between cycles: ~500 bytes an app as read, ~250 kept.
 */
function compact(app: AppBackupState, words: Map<string, string>): AppBackupState {
  return {
    id: app.id,
    name: app.name,
    namespace: shared(app.namespace, words),
    project: shared(app.project, words),
    environment_type: shared(app.environment_type, words),
    server: shared(app.server, words),
    url: app.url,
    state: shared(app.state, words),
    updated_at: app.updated_at,
    backup_health: shared(app.backup_health, words),
    last_backup_at: app.last_backup_at,
  };
}

/** The copy of `word` already kept in `words` (a string equal to it, so nothing reads a difference). */
function shared<T extends string | null>(word: T, words: Map<string, string>): T {
  if (word === null) return word;
  if (!words.has(word)) words.set(word, word);
  return words.get(word) as T;
}
