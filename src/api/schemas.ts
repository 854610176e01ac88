/**
 * Response schemas of the Deployment Management Service API v1 (`shared/dms-api-v1.md` §2).
 *
 * These zod schemas are the single description of what the service answers: the client parses
 * every answer with them, the simulator's answers are checked against them in tests, and the
 * TypeScript types used everywhere else are inferred from them (never written twice).
 *
 * `T or null` in the reference means "always present, may be null": `.nullable()`, not `.optional()`.
 * State strings whose values the reference leaves open ("not shown") stay plain strings here: the
 * client makes no assumption about them; the watch engine takes its vocabulary from configuration.
 */
import { z } from 'zod';
import { cutAtEdge } from './cut-at-edge.js';
import { boundOpenRecord } from './open-record.js';

/**
 * A timestamp ("string, format not stated"), or null. The client checks every one of an answer
 * with `parseTime`'s rules (`timestamp-check.ts`, found by this instance) and fails the record whose
 * timestamp it cannot read, naming the field and the record's id.
 */
export const timestampSchema = z.string().nullable();
/** A text of the service's own words (a reason, a progress note), cut at a safe edge, or null. */
const cutText = z
  .string()
  .transform((t) => cutAtEdge(t))
  .nullable();
/** Environment types are stated by the reference. */
export const environmentTypeSchema = z.enum(['production', 'staging', 'development']);
/** production, staging or development. */
export type EnvironmentType = z.infer<typeof environmentTypeSchema>;

/** A URL's certificate status, as the reference states it. */
export const sslStatusSchema = z.enum(['valid', 'expiring_soon', 'expired', 'error', 'unknown']);
/** One of {@link sslStatusSchema}'s values. */
export type SslStatus = z.infer<typeof sslStatusSchema>;

/** An app's backup health as the service judges it (`none`: no backup yet). */
export const backupHealthSchema = z.enum(['healthy', 'warning', 'critical', 'none']);
/** One of {@link backupHealthSchema}'s values. */
export type BackupHealth = z.infer<typeof backupHealthSchema>;

/** A list answer: `{items, total}`. */
export function pageSchema<T extends z.ZodTypeAny>(item: T) {
  return z.object({ items: z.array(item), total: z.number().int().nonnegative() });
}
/** One page of a list answer, as {@link pageSchema} reads it. */
export type Page<T> = z.output<ReturnType<typeof pageSchema<z.ZodType<T>>>>;

// ---- App -------------------------------------------------------------------------------------

/** `apps.list` items: the App fields up to `last_backup_at`. */
export const appListItemSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  namespace: z.string(),
  project: z.string(),
  environment: z.string(),
  environment_type: environmentTypeSchema.nullable(),
  version: z.string(),
  edition: z.string(),
  state: z.string(),
  url: z.string().nullable(),
  server: z.string().nullable(),
  deployed_at: timestampSchema,
  updated_at: timestampSchema,
  backup_health: backupHealthSchema,
  last_backup_at: timestampSchema,
});
/** One app as `apps.list` gives it. */
export type AppListItem = z.infer<typeof appListItemSchema>;

/** One URL of an app in `apps.get`, with its certificate and outside-check state. */
export const appUrlSchema = z.object({
  url: z.string(),
  primary: z.boolean(),
  state: z.string(),
  ssl_status: sslStatusSchema,
  ssl_expires_at: timestampSchema,
  public_check: z.enum(['passed', 'failed']).nullable(),
  public_check_code: z.string().nullable(),
  public_checked_at: timestampSchema,
});

/** One code repository of an app in `apps.get`. */
export const appRepositorySchema = z.object({
  repository: z.string(),
  repository_url: z.string().nullable(),
  branch: z.string(),
  main: z.boolean(),
  deployed_sha: z.string().nullable(),
  head_sha: z.string().nullable(),
  deployed_message: z.string().nullable(),
  up_to_date: z.boolean().nullable(),
  checked_at: timestampSchema,
  deleted_upstream: z.boolean(),
});

/** One code repository of an app. */
export type AppRepository = z.infer<typeof appRepositorySchema>;

/** A version upgrade of an app in progress (`apps.get`), or null. */
export const appUpgradeSchema = z.object({
  id: z.number().int(),
  from_version: z.string(),
  to_version: z.string(),
  purpose: z.enum(['test', 'production']),
  state: z.string(),
  source_app_id: z.number().int(),
  source_app: z.string(),
  new_app_id: z.number().int().nullable(),
  new_app: z.string().nullable(),
});

/** An open version upgrade of an app. */
export type AppUpgrade = z.infer<typeof appUpgradeSchema>;

/** `apps.get`: the full App (46 fields counting nested ones). */
export const appSchema = appListItemSchema.extend({
  urls: z.array(appUrlSchema),
  repositories: z.array(appRepositorySchema),
  upgrade: appUpgradeSchema.nullable(),
  maintenance: z.boolean(),
});
/** One app in full, as `apps.get` gives it (the maintenance flag is only here). */
export type App = z.infer<typeof appSchema>;

// ---- Change result ---------------------------------------------------------------------------

/** The answer of every change. */
export const changeResultSchema = z.object({
  state: z.enum(['started', 'already_running']),
  run_id: z.number().int().nullable(),
  app_id: z.number().int().nullable(),
  backup_id: z.number().int().nullable(),
  backup_run_id: z.number().int().nullable(),
});
/** What a change answers: started or already running, and the run it concerns. */
export type ChangeResult = z.infer<typeof changeResultSchema>;

// ---- Backup ----------------------------------------------------------------------------------

/** One off-site copy of a backup: where it went and whether the transfer worked. */
export const offsiteCopySchema = z.object({
  storage: z.string(),
  type: z.string().nullable(),
  on_storage: z.boolean(),
  state: z.string().nullable(),
  uploaded_at: timestampSchema,
  error: z.string().nullable(),
});
/** One off-site copy of a backup. */
export type OffsiteCopy = z.infer<typeof offsiteCopySchema>;

/** One backup (`backups.list`, `backups.get`), with its verification and off-site copies. */
export const backupSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  namespace: z.string(),
  app_id: z.number().int().nullable(),
  app: z.string().nullable(),
  project: z.string().nullable(),
  environment_type: environmentTypeSchema.nullable(),
  format: z.string().nullable(),
  size_mb: z.number().nullable(),
  taken_at: timestampSchema,
  automated: z.boolean(),
  state: z.string().nullable(),
  storage: z.string().nullable(),
  on_server: z.boolean(),
  verified: z.boolean(),
  offsite: z.array(offsiteCopySchema),
});
/** One backup. */
export type Backup = z.infer<typeof backupSchema>;

// ---- Installer -------------------------------------------------------------------------------

/** One installer (`installers.list`). */
export const installerSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  namespace: z.string(),
  type: z.string(),
  app: z.string().nullable(),
  state: z.string(),
  server: z.string().nullable(),
  url: z.string().nullable(),
  platform_login: z.boolean(),
});
/** One installer. */
export type Installer = z.infer<typeof installerSchema>;

// ---- Logs ------------------------------------------------------------------------------------

/**
 * The logs `logs.tail` reads (§4, its `source` parameter): the application log (`main`), the
 * setup, transfer, restore, backup and upgrade logs, and scripts'.
 */
export const LOG_SOURCES = ['main', 'setup', 'transfer', 'restore', 'backup', 'upgrade', 'script'] as const;
/** One log `logs.tail` reads. */
export type LogSource = (typeof LOG_SOURCES)[number];

/** `logs.tail`: the last log lines, with the cursor to read on from. */
export const logTailSchema = z.object({
  items: z.array(z.object({ time: timestampSchema, line: z.string(), source: z.string() })),
  cursor: z.string(),
  truncated: z.boolean(),
});
/** A tail of log lines. */
export type LogTail = z.infer<typeof logTailSchema>;

// ---- Project ---------------------------------------------------------------------------------

/** One project with its environments (`projects.list`). */
export const projectSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  code: z.string().nullable(),
  namespace: z.string(),
  plan: z.string().nullable(),
  disabled: z.boolean(),
  environments: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      type: environmentTypeSchema,
      app_count: z.number().int(),
    }),
  ),
});
/** One project. */
export type Project = z.infer<typeof projectSchema>;

// ---- Restore point ---------------------------------------------------------------------------

/** One restore point of an app: what a run changed, and how to undo it. */
export const restorePointSchema = z.object({
  id: z.number().int(),
  app_id: z.number().int(),
  at: timestampSchema,
  action: z.string().nullable(),
  outcome: z.enum(['running', 'applied', 'failed', 'kept']),
  run_id: z.number().int().nullable(),
  commits: z.array(z.object({ repository: z.string(), before: z.string().nullable(), after: z.string().nullable() })),
  modules: z.array(z.string()),
  backup_id: z.number().int().nullable(),
  backup: z.string().nullable(),
  backup_verified: z.boolean(),
  rollback_of_id: z.number().int().nullable(),
  held: z.boolean(),
  instant_undo: z.boolean(),
  kept_until: timestampSchema,
});
/** One restore point. */
export type RestorePoint = z.infer<typeof restorePointSchema>;

// ---- Run -------------------------------------------------------------------------------------

/** `runs.list` items: the Run fields up to `updated_at`. */
export const runListItemSchema = z.object({
  id: z.number().int(),
  workflow: z.string(),
  action: z.string(),
  state: z.string(),
  retrying: z.boolean(),
  namespace: z.string(),
  record: z.string().nullable(),
  record_type: z.string().nullable(),
  app_id: z.number().int().nullable(),
  project: z.string().nullable(),
  environment_type: environmentTypeSchema.nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
/** One run as `runs.list` gives it (no steps, no watcher). */
export type RunListItem = z.infer<typeof runListItemSchema>;

/** One step of a run; `reason` says why it failed. */
export const runStepSchema = z.object({
  name: z.string(),
  state: z.string(),
  started_at: timestampSchema,
  updated_at: timestampSchema,
  reason: cutText,
});
/** One step of a run. */
export type RunStep = z.infer<typeof runStepSchema>;

/** The states of a run's watcher, as the reference states them (§3). */
export const watcherStateSchema = z.enum(['waiting', 'completed', 'failed', 'timeout', 'stopped']);
/** One of {@link watcherStateSchema}'s values. */
export type WatcherState = z.infer<typeof watcherStateSchema>;

/** `runs.get`: a Run with its steps and watcher (23 fields counting nested ones). */
export const runSchema = runListItemSchema.extend({
  steps: z.array(runStepSchema),
  watcher: z
    .object({
      state: watcherStateSchema,
      progress: cutText,
      reason: cutText,
    })
    .nullable(),
});
/** One run in full, as `runs.get` gives it. */
export type Run = z.infer<typeof runSchema>;

// ---- Server ----------------------------------------------------------------------------------

/** One server (`servers.list`, `servers.get`) and how many apps it hosts. */
export const serverSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  namespace: z.string(),
  state: z.string(),
  provider: z.string().nullable(),
  size: z.string().nullable(),
  region: z.string().nullable(),
  image: z.string().nullable(),
  lb_engine: z.string().nullable(),
  public_ip: z.string().nullable(),
  app_count: z.number().int(),
});
/** One server. */
export type Server = z.infer<typeof serverSchema>;

// ---- URL record ------------------------------------------------------------------------------

/** One URL record (`urls.list`): its app, certificate and outside check. */
export const urlRecordSchema = z.object({
  id: z.number().int(),
  url: z.string(),
  namespace: z.string(),
  app_id: z.number().int(),
  app: z.string(),
  project: z.string().nullable(),
  environment_type: environmentTypeSchema.nullable(),
  // The rest as an app's `urls` gives it, from `primary` on.
  ...appUrlSchema.omit({ url: true }).shape,
});
/** One URL record. */
export type UrlRecord = z.infer<typeof urlRecordSchema>;

// ---- Identity --------------------------------------------------------------------------------

/** `whoami`: who the token is and which namespaces it reaches, at what level. */
export const identitySchema = z.object({
  login: z.string(),
  name: z.string(),
  namespaces: z.array(z.object({ id: z.number().int(), name: z.string(), code: z.string(), level: z.string() })),
});
/** What `whoami` answers. */
export type Identity = z.infer<typeof identitySchema>;

// ---- Attention summary -----------------------------------------------------------------------

/**
 * The reference does not give the item shapes of attention sections ("not shown"), only that
 * `kind` decides them. Items are kept as open records; detectors fingerprint them by `id` where
 * present and by content otherwise.
 */
export const attentionItemSchema = z.record(z.string(), z.unknown()).transform((item) => boundOpenRecord(item));
/** One attention item, an open record (see {@link attentionItemSchema}). */
export type AttentionItem = z.infer<typeof attentionItemSchema>;

/** One section of the attention summary: a rule, its severity, its count and up to 20 items. */
export const attentionSectionSchema = z.object({
  rule: z.string(),
  severity: z.enum(['danger', 'warning', 'info']),
  label: z.string(),
  kind: z.enum(['app', 'url', 'failure']),
  count: z.number().int().nonnegative(),
  items: z.array(attentionItemSchema),
});
/** One attention section. */
export type AttentionSection = z.infer<typeof attentionSectionSchema>;

/** `attention.list`: the sections with something to report, most severe first. */
export const attentionSummarySchema = z.object({
  sections: z.array(attentionSectionSchema),
  total: z.number().int().nonnegative(),
});
/** What `attention.list` answers. */
export type AttentionSummary = z.infer<typeof attentionSummarySchema>;

// ---- Envelopes -------------------------------------------------------------------------------

/** Refusal body: `{"error": {"code", "message"}}`. */
export const errorEnvelopeSchema = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});

/** Every error code of reference §7 with its HTTP status. */
export const ERROR_STATUS = {
  invalid_token: 401,
  api_not_available: 403,
  function_not_allowed: 403,
  access_denied: 403,
  writes_disabled: 403,
  plan_required: 403,
  unknown_parameter: 400,
  invalid_parameter: 400,
  invalid_request: 400,
  missing_parameter: 400,
  not_found: 404,
  namespace_not_found: 404,
  in_progress: 409,
  request_in_progress: 409,
  not_deployed: 409,
  upgrade_standby: 409,
  not_retryable: 409,
  retry_coming: 409,
  idempotency_key_reused: 422,
  locked: 423,
  idempotency_key_required: 428,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;
/** An error code of reference §7. */
export type ErrorCode = keyof typeof ERROR_STATUS;
