/**
 * The read functions of the API, one method each, named after the catalogue. Lists honour the
 * catalogue's filters, the token's namespaces and limit/offset, and, in the `environment` list
 * grading (the default), the environments it may read; reads by id outside the token's namespaces
 * are not_found, in an environment it may not read access_denied (§5.4: "Reads by id are graded by
 * the environment of the record asked for"). The reference grades only reads by id: the `none`
 * list grading leaves lists (and the counts and attention summary that follow them) ungraded, so
 * a list names records that `get` refuses.
 */
import type { FunctionName } from '../../../src/api/functions.js';
import type { EnvironmentType, Identity } from '../../../src/api/schemas.js';
import {
  allOf,
  findInScope,
  findReadable,
  namespaceScope,
  pageOf,
  type CallContext,
  type NamespaceScope,
} from './call-context.js';
import type { LogTail } from './log-tail.js';
import type { Indexed, NewestFirstIndex } from './newest-first-index.js';
import type { ProblemFinder } from './problem-finder.js';
import { SimError } from './sim-error.js';
import type { AppRec, InstallerRec, ProjectRec, RunRec, ServerRec, SimState, UrlRec } from './sim-state.js';
import type { StateKind, StateWords } from './state-words.js';
import type { Grant } from './token-grants.js';
import { PLANS_WITH_LOGS, VOCABULARY } from './vocabulary.js';
import { BAD_SERVER_STATES } from '../../../src/config/state-words.js';
import { isGone, type Views } from './views.js';

/**
 * Where a list of indexed records (runs, backups) reads from: the app's records for `app_id`, the
 * one namespace's records when the scope is a single namespace (already in scope), else all of
 * them; `inScope` is the namespace filter still to apply (null: none).
 */
function indexedSource<T extends Indexed>(
  index: NewestFirstIndex<T>,
  scope: NamespaceScope,
  appId: unknown,
): { source: readonly T[]; inScope: ((record: T) => boolean) | null } {
  const inScope = scope.everything ? null : (record: T) => scope.nsIds.has(record.nsId);
  if (appId !== undefined) return { source: index.byApp(appId as number), inScope };
  if (scope.single !== null) return { source: index.byNamespace(scope.single), inScope: null };
  return { source: index.all, inScope };
}

/**
 * Whether lists are graded by the environments the token may read: `environment` (default: a list
 * shows only what `get` would give) or `none` (lists show every record of the token's namespaces;
 * only reads by id are graded, as the reference states it).
 */
export const LIST_GRADINGS = ['environment', 'none'] as const;
/** One of {@link LIST_GRADINGS}. */
export type ListGrading = (typeof LIST_GRADINGS)[number];

/** Checks a list grading for the simulator's options; throws an Error naming the choices. */
export function checkListGrading(grading: string): ListGrading {
  if (!(LIST_GRADINGS as readonly string[]).includes(grading))
    throw new Error(`listGrading must be one of ${LIST_GRADINGS.join(', ')}, got ${JSON.stringify(grading)}`);
  return grading as ListGrading;
}

type ReadName = Exclude<
  FunctionName,
  'apps.backup' | 'apps.maintenance' | 'apps.restart' | 'apps.update' | 'apps.update_modules' | 'runs.retry'
>;

/** Answers read functions from the simulator's state. */
export class ReadHandlers {
  /** Whether lists are graded by environment (switchable at run time: control.setListGrading). */
  listGrading: ListGrading = 'environment';

  constructor(
    private readonly state: SimState,
    private readonly views: Views,
    private readonly problems: ProblemFinder,
    private readonly logs: LogTail,
    private readonly seed: number,
    private readonly words: StateWords,
  ) {}

  /** Answers one read function. */
  handle(name: ReadName, ctx: CallContext): unknown {
    return this.table[name](ctx);
  }

  private readonly table: Record<ReadName, (ctx: CallContext) => unknown> = {
    'apps.get': (ctx) => this.views.app(this.readableApp(ctx), ctx.now),
    'apps.list': (ctx) => {
      const q = ctx.query;
      const scope = namespaceScope(this.state, ctx.grant, q.namespace);
      const search = (q.search as string | undefined)?.toLowerCase();
      const project = (q.project as string | undefined)?.toLowerCase();
      const keep = allOf<AppRec>([
        !scope.everything && ((a) => scope.nsIds.has(a.nsId)),
        this.readable(ctx.grant),
        q.include_deleted !== true && ((a) => !isGone(a.state)),
        search !== undefined && ((a) => a.name.toLowerCase().includes(search)),
        q.environment_type !== undefined && ((a) => a.envType === q.environment_type),
        q.server_id !== undefined && ((a) => a.serverId === q.server_id),
        q.version !== undefined && ((a) => a.version === q.version),
        q.edition !== undefined && ((a) => a.edition === q.edition),
        q.state !== undefined && this.stateIs('app', q.state),
        project !== undefined &&
          ((a) => {
            const p = this.state.projectOf(a);
            return p.name.toLowerCase().includes(project) || p.code.toLowerCase().includes(project);
          }),
      ]);
      return pageOf([...this.state.apps.values()], keep, q, (a) => this.views.appListItem(a, ctx.now));
    },
    'attention.list': (ctx) =>
      this.problems.attention(
        ctx.now,
        namespaceScope(this.state, ctx.grant, ctx.query.namespace).nsIds,
        this.readable(ctx.grant) ?? undefined,
      ),
    'backups.get': (ctx) =>
      this.views.backup(
        findReadable(this.state.backups, ctx.id, ctx.grant, 'backup', (b) => this.environmentOf(b.appId)),
        ctx.now,
      ),
    'backups.list': (ctx) => {
      const q = ctx.query;
      const { source, inScope } = indexedSource(
        this.state.backupIndex,
        namespaceScope(this.state, ctx.grant, q.namespace),
        q.app_id,
      );
      return pageOf(source, allOf([inScope, this.readableByApp(ctx.grant)]), q, (b) => this.views.backup(b, ctx.now));
    },
    'installers.get': (ctx) => this.views.installer(findInScope(this.state.installers, ctx.id, ctx.grant, 'installer')),
    'installers.list': (ctx) => {
      const q = ctx.query;
      const scope = namespaceScope(this.state, ctx.grant, q.namespace);
      const keep = allOf<InstallerRec>([
        !scope.everything && ((i) => scope.nsIds.has(i.nsId)),
        q.include_deleted !== true && ((i) => i.state !== VOCABULARY.installer.deleted),
        q.server_id !== undefined && ((i) => i.serverId === q.server_id),
        q.state !== undefined && this.stateIs('installer', q.state),
      ]);
      return pageOf([...this.state.installers.values()], keep, q, (i) => this.views.installer(i));
    },
    'logs.tail': (ctx) => {
      const app = this.readableApp(ctx);
      const plan = this.state.projectOf(app).plan;
      if (!PLANS_WITH_LOGS.includes(plan))
        throw new SimError(
          'plan_required',
          `the ${plan} plan of this app's project has no log access; it needs ${PLANS_WITH_LOGS.join(' or ')}`,
        );
      const server = app.serverId === null ? undefined : this.state.servers.get(app.serverId);
      if (!server || BAD_SERVER_STATES.includes(server.state) || isGone(app.state) || app.deployedAt === null) {
        throw new SimError(
          'unavailable',
          `logs of app ${app.id} cannot be read now (server ${server?.name ?? 'none'} is ${server?.state ?? 'missing'}, app is ${app.state})`,
        );
      }
      return this.logs.tail(app, ctx.query, ctx.now, this.seed);
    },
    'projects.get': (ctx) => {
      const project = findInScope(this.state.projects, ctx.id, ctx.grant, 'project');
      return this.views.project(project, this.views.appCounts(this.readable(ctx.grant)).byEnv, ctx.grant.mayRead);
    },
    'projects.list': (ctx) => {
      const q = ctx.query;
      const scope = namespaceScope(this.state, ctx.grant, q.namespace);
      const search = (q.search as string | undefined)?.toLowerCase();
      const keep = allOf<ProjectRec>([
        !scope.everything && ((p) => scope.nsIds.has(p.nsId)),
        q.include_deleted !== true && ((p) => !p.deleted),
        search !== undefined && ((p) => p.name.toLowerCase().includes(search) || p.code.toLowerCase().includes(search)),
      ]);
      const { byEnv } = this.views.appCounts(this.readable(ctx.grant));
      return pageOf([...this.state.projects.values()], keep, q, (p) => this.views.project(p, byEnv, ctx.grant.mayRead));
    },
    'restore_points.list': (ctx) => {
      const app = this.readableApp(ctx);
      return pageOf(this.state.restorePointIndex.byApp(app.id), null, ctx.query, (p) => this.views.restorePoint(p));
    },
    'runs.get': (ctx) =>
      this.views.run(findReadable(this.state.runs, ctx.id, ctx.grant, 'run', (r) => this.environmentOf(r.appId))),
    'runs.list': (ctx) => {
      const q = ctx.query;
      const { source, inScope } = indexedSource(
        this.state.runIndex,
        namespaceScope(this.state, ctx.grant, q.namespace),
        q.app_id,
      );
      const keep = allOf<RunRec>([
        inScope,
        this.readableByApp(ctx.grant),
        q.state !== undefined && this.stateIs('run', q.state),
      ]);
      return pageOf(source, keep, q, (r) => this.views.runListItem(r));
    },
    'servers.get': (ctx) =>
      this.views.server(
        findInScope(this.state.servers, ctx.id, ctx.grant, 'server'),
        this.views.appCounts(this.readable(ctx.grant)).byServer,
      ),
    'servers.list': (ctx) => {
      const q = ctx.query;
      const scope = namespaceScope(this.state, ctx.grant, q.namespace);
      const keep = allOf<ServerRec>([
        !scope.everything && ((s) => scope.nsIds.has(s.nsId)),
        q.include_deleted !== true && ((s) => s.state !== VOCABULARY.server.deleted),
        q.state !== undefined && this.stateIs('server', q.state),
      ]);
      const { byServer } = this.views.appCounts(this.readable(ctx.grant));
      return pageOf([...this.state.servers.values()], keep, q, (s) => this.views.server(s, byServer));
    },
    'urls.list': (ctx) => {
      const q = ctx.query;
      const scope = namespaceScope(this.state, ctx.grant, q.namespace);
      const keep = allOf<UrlRec>([
        !scope.everything && ((u) => scope.nsIds.has(u.nsId)),
        this.readableByApp(ctx.grant),
        q.app_id !== undefined && ((u) => u.appId === q.app_id),
        q.ssl_status !== undefined && ((u) => this.views.sslStatus(u, ctx.now) === q.ssl_status),
      ]);
      return pageOf([...this.state.urls.values()], keep, q, (u) => this.views.url(u, ctx.now));
    },
    whoami: (ctx): Identity => {
      const scope = namespaceScope(this.state, ctx.grant, ctx.query.namespace);
      const nsIds = ctx.grant.nsList.filter((id) => scope.nsIds.has(id));
      return {
        login: ctx.grant.login,
        name: ctx.grant.name,
        namespaces: nsIds.map((id) => {
          const ns = this.state.namespace(id);
          return { id: ns.id, name: ns.name, code: ns.code, level: ctx.grant.level };
        }),
      };
    },
  };

  /** A `state` filter, given in the service's words, against the records' own. */
  private stateIs(kind: StateKind, asked: unknown): (record: { state: string }) => boolean {
    const word = this.words.read(kind, String(asked));
    return (record) => record.state === word;
  }

  /** The app of the path's id, if the token may read it. */
  private readableApp(ctx: CallContext): AppRec {
    return findReadable(this.state.apps, ctx.id, ctx.grant, 'app', (a) => a.envType);
  }

  /** The environment that grades a record of an app: the app's (null: none, or no app). */
  private environmentOf(appId: number | null): EnvironmentType | null {
    return appId === null ? null : (this.state.apps.get(appId)?.envType ?? null);
  }

  /** Apps the token may read; null when it reads every environment (no filter to apply). */
  private readable(grant: Grant): ((app: AppRec) => boolean) | null {
    return grant.readsAll || this.listGrading === 'none' ? null : (app) => grant.mayRead(app.envType);
  }

  /** Records of apps (URLs, backups, runs) the token may read; null when it reads every environment. */
  private readableByApp(grant: Grant): ((record: { appId: number | null }) => boolean) | null {
    return grant.readsAll || this.listGrading === 'none'
      ? null
      : (record) => grant.mayRead(this.environmentOf(record.appId));
  }
}
