/**
 * The state vocabularies of the simulated service, in one place.
 *
 * The reference leaves the values of app, run, step, backup, server, installer, URL and upgrade
 * `state` strings open ("not shown"). The simulator uses the plausible values below. The API client
 * makes no assumption about them; the watch engine takes the ones it needs from configuration
 * (`checks.*`), so pointing the daemon at a service with other words is a configuration change,
 * not a code change. The words those settings default to (`src/config/state-words.ts`) are taken
 * from there, so the simulator speaks the daemon's defaults by construction.
 */
import { STATE_WORDS } from '../../../src/config/state-words.js';

const { run, server, app, backup, offsite, upgrade, installer } = STATE_WORDS;

/** Every kind of record's state words, by meaning: the daemon's defaults and the simulator's own. */
export const VOCABULARY = {
  run: {
    /** Waiting for a worker. */
    queued: run.queued,
    running: run.running,
    /** Finished successfully. */
    done: run.done,
    /** Failed; `retrying` true means an automatic retry of the failed step is due (not failed yet). */
    error: run.error,
    cancelled: run.cancelled,
  },
  step: { pending: 'pending', running: 'running', done: 'done', error: 'error', skipped: 'skipped' },
  app: {
    running: app.running,
    stopped: app.stopped,
    deploying: app.deploying,
    error: app.error,
    deleted: 'deleted',
    disabled: 'disabled',
  },
  backup: { running: backup.running, done: backup.done, failed: backup.failed },
  offsite: { uploaded: 'uploaded', uploading: 'uploading', failed: offsite.failed, deleted: 'deleted' },
  server: {
    running: server.running,
    provisioning: server.provisioning,
    stopped: server.stopped,
    error: server.error,
    unreachable: server.unreachable,
    deleted: 'deleted',
  },
  installer: { running: installer.running, stopped: installer.stopped, error: installer.error, deleted: 'deleted' },
  url: { active: 'active', pending: 'pending', error: 'error' },
  upgrade: {
    requested: upgrade.requested,
    testing: upgrade.testing,
    standby: upgrade.standby,
    done: upgrade.done,
    failed: upgrade.failed,
  },
} as const;

/**
 * The workflows the simulator runs: the action each one performs, its step names in order, and
 * whether a watcher follows it on the server after the steps (backup, restore, version upgrade).
 */
export const WORKFLOWS = {
  app_deploy: {
    action: 'deploy',
    steps: ['provision', 'pull_code', 'build_image', 'install_modules', 'start', 'check'],
    watcher: false,
  },
  app_update: {
    action: 'update',
    steps: ['pull_code', 'build_image', 'update_modules', 'restart', 'check'],
    watcher: false,
  },
  app_update_modules: { action: 'update_modules', steps: ['update_modules', 'restart', 'check'], watcher: false },
  app_backup: { action: 'backup', steps: ['prepare', 'launch_backup'], watcher: true },
  app_restart: { action: 'restart', steps: ['restart', 'check'], watcher: false },
  app_maintenance: { action: 'maintenance', steps: ['switch_page'], watcher: false },
  app_restore: { action: 'restore', steps: ['prepare', 'launch_restore'], watcher: true },
  app_upgrade: { action: 'upgrade', steps: ['prepare', 'copy_database', 'launch_upgrade'], watcher: true },
  server_patch: { action: 'patch', steps: ['drain', 'patch_packages', 'reboot', 'check'], watcher: false },
} as const satisfies Record<string, { action: string; steps: readonly string[]; watcher: boolean }>;
/** Name of a simulated workflow. */
export type WorkflowName = keyof typeof WORKFLOWS;

/** What a watcher reports while it waits, in order. */
export const WATCHER_PROGRESS = [
  'queued on server',
  'dumping database',
  'archiving filestore',
  'uploading off-site',
  'verifying archive',
] as const;

/** Why a simulated step fails (the `reason` of a step in error). */
export const STEP_FAILURE_REASONS = [
  'pip install failed: no matching distribution for lxml==4.6.1',
  'module update failed: column "x_partner_ref" does not exist',
  'health check timed out after 120 s',
  'git pull failed: remote branch not found',
  'disk full on /var/lib/docker',
  'database connection refused',
  'image build failed: exit code 137 (out of memory)',
] as const;

/** Project plans; `starter` has no log access (logs.tail answers plan_required). */
export const PLANS = { starter: 'starter', business: 'business', enterprise: 'enterprise' } as const;
/** Plans that include reading application logs. */
export const PLANS_WITH_LOGS: readonly string[] = [PLANS.business, PLANS.enterprise];

/** Log sources of logs.tail (the reference's), in the order lines of the same second are listed. */
export { LOG_SOURCES, type LogSource } from '../../../src/api/schemas.js';

/** What an outside check of a URL can find when it fails (`public_check_code`). */
export const PUBLIC_CHECK_FAILURES = [
  'http_502',
  'http_404',
  'wrong_app',
  'dns_nxdomain',
  'timeout',
  'tls_handshake_failed',
] as const;
/** `public_check_code` of a passed check. */
export const PUBLIC_CHECK_PASSED = 'http_200';

/** Why an off-site upload fails. */
export const OFFSITE_FAILURES = [
  'upload failed: 403 AccessDenied',
  'upload failed: connection reset',
  'quota exceeded on storage',
] as const;
