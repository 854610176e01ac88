/**
 * The catalogue of every function of the Deployment Management Service API v1
 * (`shared/dms-api-v1.md` §4–§5): method, path, parameters, answer schema, permission and the
 * error codes beyond the base set. The client, the simulator and the OpenAPI document are all
 * built from this one table, so a function is described in exactly one place.
 */
import type { z } from 'zod';
import {
  appListItemSchema,
  appSchema,
  attentionSummarySchema,
  backupSchema,
  changeResultSchema,
  identitySchema,
  installerSchema,
  logTailSchema,
  pageSchema,
  projectSchema,
  restorePointSchema,
  runListItemSchema,
  runSchema,
  serverSchema,
  urlRecordSchema,
  type ErrorCode,
} from './schemas.js';

/** How one query or body parameter is typed on the wire. */
export type ParamSpec = ({ type: 'integer' | 'boolean' | 'string' } | { type: 'enum'; values: readonly string[] }) & {
  required?: boolean;
};

/** The TypeScript value type of a parameter spec. */
export type ParamValue<P extends ParamSpec> = P extends { type: 'integer' }
  ? number
  : P extends { type: 'boolean' }
    ? boolean
    : P extends { type: 'enum'; values: readonly (infer V)[] }
      ? V
      : string;

type RequiredKeys<S extends Record<string, ParamSpec>> = {
  [K in keyof S]: S[K] extends { required: true } ? K : never;
}[keyof S];

/** The parameter object of a function: required ones required, the rest optional, no others. */
export type ParamsOf<S extends Record<string, ParamSpec>> = {
  [K in RequiredKeys<S>]: ParamValue<S[K]>;
} & {
  [K in Exclude<keyof S, RequiredKeys<S>>]?: ParamValue<S[K]>;
};

/** A permission as the reference writes it: `<resource>: <rights>`. */
export type Permission =
  | 'deployment_app: read'
  | 'deployment_app: read + view_logs'
  | 'deployment_app: update + deploy'
  | 'deployment_backup: read'
  | 'deployment_backup: create + backup'
  | 'deployment_project: read'
  | 'deployment_workflow: read'
  | 'deployment_workflow: update + deploy'
  | 'deployment_server: read'
  | 'ansible_installer: read'
  | 'workspace: read';

/** One function of the API. */
export interface FunctionSpec {
  /** Dotted name, e.g. `apps.get`. */
  readonly name: string;
  /** Assistant tool name, e.g. `apps_get`. */
  readonly tool: string;
  readonly method: 'GET' | 'POST';
  /** Path below `/api/v1`, with `{id}` for the integer path parameter. */
  readonly path: string;
  readonly kind: 'read' | 'change';
  /** A list answer `{items, total}` that can be paged with limit/offset. */
  readonly paged: boolean;
  /**
   * The field of a answer that is not a list but holds an array of records (attention's
   * `sections`): read with a quarantine, each is judged alone, as a list's items are.
   */
  readonly records?: string;
  readonly permission: Permission;
  readonly query: Record<string, ParamSpec>;
  readonly body: Record<string, ParamSpec>;
  /** Schema of the `data` payload. */
  readonly answer: z.ZodTypeAny;
  /** Error codes beyond the base set B (and, for changes, beyond not_found and W). */
  readonly errors: readonly ErrorCode[];
  readonly summary: string;
}

const BASE_ERRORS: readonly ErrorCode[] = [
  'invalid_token',
  'api_not_available',
  'function_not_allowed',
  'access_denied',
  'rate_limited',
  'unknown_parameter',
  'invalid_parameter',
  'invalid_request',
  'internal_error',
];
const CHANGE_ERRORS: readonly ErrorCode[] = [
  'not_found',
  'writes_disabled',
  'idempotency_key_required',
  'idempotency_key_reused',
  'request_in_progress',
  'locked',
  'plan_required',
];

/** `limit`, `offset`, `namespace`: the common list parameters. */
const LIST = {
  limit: { type: 'integer' },
  offset: { type: 'integer' },
  namespace: { type: 'string' },
} as const;
const ENV_TYPE = { type: 'enum', values: ['production', 'staging', 'development'] } as const;
const FORMAT = { type: 'enum', values: ['zip', 'dump'] } as const;

/** No parameters. */
type None = Record<never, never>;

/**
 * One function of the catalogue, from what the reference states of it; the rest follows: a read
 * unless `kind` says a change, GET for a read and POST for a change, not paged, and no query or
 * body parameters unless given.
 */
function fn<
  A extends z.ZodTypeAny,
  const Q extends Record<string, ParamSpec> = None,
  const B extends Record<string, ParamSpec> = None,
>(
  name: string,
  spec: Pick<FunctionSpec, 'path' | 'permission' | 'errors' | 'summary'> &
    Partial<Pick<FunctionSpec, 'kind' | 'paged' | 'records'>> & { query?: Q; body?: B; answer: A },
) {
  const kind = spec.kind ?? 'read';
  return {
    ...spec,
    name,
    tool: name.replace('.', '_'),
    method: kind === 'change' ? ('POST' as const) : ('GET' as const),
    kind,
    paged: spec.paged ?? false,
    query: spec.query ?? ({} as Q),
    body: spec.body ?? ({} as B),
  };
}

/** The resource of a dotted name: `apps` of `apps.get`. */
const resourceOf = (name: string) => name.slice(0, name.indexOf('.'));

/** A read of one record by id, `/<resource>/{id}`: not_found its one error beyond the base set. */
function byId<A extends z.ZodTypeAny>(
  name: string,
  spec: Pick<FunctionSpec, 'permission' | 'summary'> & { answer: A },
) {
  return fn(name, { path: `/${resourceOf(name)}/{id}`, errors: ['not_found'], ...spec });
}

/**
 * A paged list of a resource, `/<resource>`, of `item`s: its own query parameters and the common
 * ones ({@link LIST}), namespace_not_found its one error beyond the base set.
 */
function list<I extends z.ZodTypeAny, const Q extends Record<string, ParamSpec> = None>(
  name: string,
  { item, query, ...spec }: Pick<FunctionSpec, 'permission' | 'summary'> & { item: I; query?: Q },
) {
  return fn(name, {
    path: `/${resourceOf(name)}`,
    paged: true,
    query: { ...(query ?? ({} as Q)), ...LIST },
    answer: pageSchema(item),
    errors: ['namespace_not_found'],
    ...spec,
  });
}

/** A change of one record, `/<resource>/{id}/<action>`, answering a change result. */
function change<const B extends Record<string, ParamSpec> = None>(
  name: string,
  spec: Pick<FunctionSpec, 'permission' | 'errors' | 'summary'> & { body?: B },
) {
  const action = name.slice(name.indexOf('.') + 1).replace(/_/g, '-');
  return fn(name, { path: `/${resourceOf(name)}/{id}/${action}`, kind: 'change', answer: changeResultSchema, ...spec });
}

/** Every function of the reference, by dotted name. */
export const FUNCTIONS = {
  // ---- reads ----
  'apps.get': byId('apps.get', {
    permission: 'deployment_app: read',
    answer: appSchema,
    summary: 'One app with its URLs, repositories, open upgrade and maintenance flag.',
  }),
  'apps.list': list('apps.list', {
    permission: 'deployment_app: read',
    query: {
      search: { type: 'string' },
      environment_type: ENV_TYPE,
      server_id: { type: 'integer' },
      version: { type: 'string' },
      edition: { type: 'enum', values: ['community', 'enterprise'] },
      project: { type: 'string' },
      state: { type: 'string' },
      include_deleted: { type: 'boolean' },
    },
    item: appListItemSchema,
    summary: 'Apps the token reaches.',
  }),
  'attention.list': fn('attention.list', {
    path: '/attention',
    permission: 'deployment_project: read',
    query: { namespace: { type: 'string' } },
    answer: attentionSummarySchema,
    records: 'sections',
    errors: ['namespace_not_found'],
    summary: 'The dashboard attention summary: sections with something to report, most severe first.',
  }),
  'backups.get': byId('backups.get', {
    permission: 'deployment_backup: read',
    answer: backupSchema,
    summary: 'One backup with its off-site copies.',
  }),
  'backups.list': list('backups.list', {
    permission: 'deployment_backup: read',
    query: { app_id: { type: 'integer' } },
    item: backupSchema,
    summary: 'Backups, newest first.',
  }),
  'installers.get': byId('installers.get', {
    permission: 'ansible_installer: read',
    answer: installerSchema,
    summary: 'One marketplace service.',
  }),
  'installers.list': list('installers.list', {
    permission: 'ansible_installer: read',
    query: { server_id: { type: 'integer' }, state: { type: 'string' }, include_deleted: { type: 'boolean' } },
    item: installerSchema,
    summary: 'Marketplace services.',
  }),
  'logs.tail': fn('logs.tail', {
    path: '/apps/{id}/logs',
    permission: 'deployment_app: read + view_logs',
    answer: logTailSchema,
    errors: ['not_found', 'plan_required', 'unavailable'],
    summary: "Recent lines of an app's logs, newest last, with a cursor for the next call.",
    query: {
      source: { type: 'string' },
      since: { type: 'string' },
      after: { type: 'string' },
      grep: { type: 'string' },
      limit: { type: 'integer' },
    },
  }),
  'projects.get': byId('projects.get', {
    permission: 'deployment_project: read',
    answer: projectSchema,
    summary: 'One project with the environments the caller sees.',
  }),
  'projects.list': list('projects.list', {
    permission: 'deployment_project: read',
    query: { search: { type: 'string' }, include_deleted: { type: 'boolean' } },
    item: projectSchema,
    summary: 'Projects.',
  }),
  'restore_points.list': fn('restore_points.list', {
    path: '/apps/{id}/restore-points',
    paged: true,
    permission: 'deployment_app: read',
    query: { limit: { type: 'integer' }, offset: { type: 'integer' } },
    answer: pageSchema(restorePointSchema),
    errors: ['not_found'],
    summary: "An app's restore points, newest first.",
  }),
  'runs.get': byId('runs.get', {
    permission: 'deployment_workflow: read',
    answer: runSchema,
    summary: 'One run with its steps and watcher.',
  }),
  'runs.list': list('runs.list', {
    permission: 'deployment_workflow: read',
    query: { app_id: { type: 'integer' }, state: { type: 'string' } },
    item: runListItemSchema,
    summary: 'Runs (deploy, update, backup), newest first.',
  }),
  'servers.get': byId('servers.get', {
    permission: 'deployment_server: read',
    answer: serverSchema,
    summary: 'One server.',
  }),
  'servers.list': list('servers.list', {
    permission: 'deployment_server: read',
    query: { state: { type: 'string' }, include_deleted: { type: 'boolean' } },
    item: serverSchema,
    summary: 'Servers.',
  }),
  'urls.list': list('urls.list', {
    permission: 'deployment_app: read',
    query: {
      app_id: { type: 'integer' },
      ssl_status: { type: 'enum', values: ['valid', 'expiring_soon', 'expired', 'unknown'] },
    },
    item: urlRecordSchema,
    summary: 'URLs with certificate and outside-check state.',
  }),
  whoami: fn('whoami', {
    path: '/whoami',
    permission: 'workspace: read',
    query: { namespace: { type: 'string' } },
    answer: identitySchema,
    errors: ['namespace_not_found'],
    summary: "The caller's identity and the namespaces the token reaches.",
  }),
  // ---- changes ----
  'apps.backup': change('apps.backup', {
    permission: 'deployment_backup: create + backup',
    body: { format: FORMAT },
    errors: ['in_progress'],
    summary: 'Back up an app (zip: database and filestore; dump: database alone).',
  }),
  'apps.maintenance': change('apps.maintenance', {
    permission: 'deployment_app: update + deploy',
    body: { on: { type: 'boolean', required: true } },
    errors: ['missing_parameter', 'in_progress', 'not_deployed', 'upgrade_standby'],
    summary: 'Put an app in or out of maintenance.',
  }),
  'apps.restart': change('apps.restart', {
    permission: 'deployment_app: update + deploy',
    errors: ['in_progress', 'upgrade_standby'],
    summary: 'Restart an app.',
  }),
  'apps.update': change('apps.update', {
    permission: 'deployment_app: update + deploy',
    body: {
      quick: { type: 'boolean' },
      modules: { type: 'enum', values: ['changed', 'configured', 'none'] },
      backup: { type: 'boolean' },
      backup_format: FORMAT,
    },
    errors: ['in_progress', 'not_deployed', 'upgrade_standby'],
    summary: 'Pull code and update an app, optionally backing up first.',
  }),
  'apps.update_modules': change('apps.update_modules', {
    permission: 'deployment_app: update + deploy',
    body: { modules: { type: 'string', required: true }, backup: { type: 'boolean' }, backup_format: FORMAT },
    errors: ['missing_parameter', 'in_progress', 'not_deployed', 'upgrade_standby'],
    summary: 'Update named modules of an app.',
  }),
  'runs.retry': change('runs.retry', {
    permission: 'deployment_workflow: update + deploy',
    body: { now: { type: 'boolean' } },
    errors: ['not_retryable', 'retry_coming'],
    summary: 'Restart a failed run from the step that failed.',
  }),
} as const;

/** Dotted name of a function of the API. */
export type FunctionName = keyof typeof FUNCTIONS;
/** Query parameters of a function. */
export type QueryOf<N extends FunctionName> = ParamsOf<(typeof FUNCTIONS)[N]['query']>;
/** Body parameters of a change. */
export type BodyOf<N extends FunctionName> = ParamsOf<(typeof FUNCTIONS)[N]['body']>;
/** The parsed `data` payload of a function. */
export type AnswerOf<N extends FunctionName> = z.infer<(typeof FUNCTIONS)[N]['answer']>;

/** Every error code a function can raise: the base set, its own, and for changes not_found and W. */
export function errorsOf(spec: FunctionSpec): ErrorCode[] {
  return [...new Set([...BASE_ERRORS, ...spec.errors, ...(spec.kind === 'change' ? CHANGE_ERRORS : [])])];
}

/** All function specs, as a list. */
export const FUNCTION_LIST: readonly FunctionSpec[] = Object.values(FUNCTIONS);
