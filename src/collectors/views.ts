/**
 * What the collectors keep of the records they read in bulk: `pick`s of the API's schemas
 * (`src/api/schemas.ts`), handed to the client as a `view` (`CallOptions.view`). The client then
 * checks and copies only these fields; the rest of each answer is garbage as soon as it is parsed.
 *
 * Each view holds exactly what the detectors read of that record, so a field they come to need is
 * added here (TypeScript says so: the snapshot types are inferred from these). A field outside the
 * view is not checked: an answer that gets it wrong still reads, since nothing here would use it.
 *
 * Why: a 10,000-app cycle reads `apps.list` for four jobs and `apps.get` 10,000 times. Keeping
 * every field made zod's copies about a third of what a cycle allocates; with these views a cycle
 * allocates ~370 MB instead of ~435 MB (zod's copies 118 → 63 MB; see docs/benchmarks.md).
 */
import { z } from 'zod';
import { appListItemSchema, appRepositorySchema, appSchema, backupSchema, restorePointSchema } from '../api/schemas.js';

/** The mask `pick` takes to keep `keys`: the fields of a view, written as a list. */
function fields<K extends string>(...keys: K[]): { [P in K]: true } {
  return Object.fromEntries(keys.map((key) => [key, true])) as { [P in K]: true };
}

/** The fields that name and link an app in a finding: its labels, name and URL. */
const APP_LABEL_FIELDS = fields('id', 'name', 'namespace', 'project', 'environment_type', 'server', 'url');

/** An app's names and links: the labels, name and URL of a finding about its runs or URLs. */
export const appLabelsView = appListItemSchema.pick(APP_LABEL_FIELDS);
/** What the run and URL detectors read of an app. */
export type AppLabels = z.infer<typeof appLabelsView>;

/**
 * An app's labels, its state, and its backup state as the service judges it: what the detectors of
 * the backups job (backups, app_state) read of every app.
 */
export const appBackupStateView = appListItemSchema.pick({
  ...APP_LABEL_FIELDS,
  // `updated_at`, when the app last changed: app_state's time of its problem (the time to alert
  // counts from it).
  ...fields('state', 'updated_at', 'backup_health', 'last_backup_at'),
});
/** What the detectors of the backups job read of an app. */
export type AppBackupState = z.infer<typeof appBackupStateView>;

/** An app's environment type: what the servers check reads of the apps on a server in a bad state. */
export const appEnvironmentView = appListItemSchema.pick({ id: true, environment_type: true });

/** Only the id: the maintenance job lists apps to read each one in full. */
export const appIdView = appListItemSchema.pick({ id: true });

/**
 * What the branches check reads of each repository of an app in `apps.get`: which branch is
 * deployed, whether it is still upstream, and whether the deployed commit is its head; and what
 * repository_checks reads: when the platform last read it.
 */
const repositoryView = appRepositorySchema.pick(
  fields('repository', 'branch', 'deployed_sha', 'head_sha', 'up_to_date', 'checked_at', 'deleted_upstream'),
);

/**
 * The fields of an `apps.get` answer the maintenance job keeps for its checks: the flag only
 * `apps.get` carries (maintenance), the repositories' branch state (branches) and when the platform
 * last read them (repository_checks, with whether the app is deployed), the open version upgrade
 * (upgrades), and the names and links of a finding. An answer is about 1.7 kB of JSON; the
 * URLs and the repositories' URLs and commit messages, which no detector reads, are left out.
 */
export const maintenanceAppView = appSchema
  .pick({ ...APP_LABEL_FIELDS, state: true, deployed_at: true, maintenance: true, upgrade: true })
  .extend({ repositories: z.array(repositoryView) });
/** What the detectors of the maintenance job read of an app. */
export type MaintenanceApp = z.infer<typeof maintenanceAppView>;
/** One repository of a {@link MaintenanceApp}. */
export type RepositoryView = MaintenanceApp['repositories'][number];

/**
 * What the restore_points check reads of an app's newest restore points (`restore_points.list`):
 * which point it is, the change that made it and when, how it went, and whether the app is held at
 * it; the commits, modules and backup are left out.
 */
export const restorePointView = restorePointSchema.pick(fields('id', 'at', 'action', 'outcome', 'run_id', 'held'));
/** One of an app's newest restore points, as the restore_points check reads it. */
export type NewestRestorePoint = z.infer<typeof restorePointView>;

/**
 * What the backups detector reads of an app's backups (the newest one, the newest that finished
 * and the newest that finished well): which one it is, when it was taken, its state, its format
 * (only a full one counts as taken), its size (an empty or shrunken one is a problem), whether it
 * was verified, whether it is still on the server, and its off-site copies. The app's own names come from its {@link AppBackupState},
 * so the backup's copies of them (namespace, app, project, environment) and its storage are left out.
 */
export const newestBackupView = backupSchema.pick(
  fields('id', 'name', 'app_id', 'taken_at', 'state', 'format', 'size_mb', 'verified', 'on_server', 'offsite'),
);
/** One of an app's newest backups, as the backups detector reads it. */
export type NewestBackup = z.infer<typeof newestBackupView>;
