/**
 * backups: per app, four independent problems, each with its own fingerprint so each resolves on
 * its own:
 * - `stale`:      no backup at all, or the newest is older than `max_age` for the app's environment
 * - `health`:     the service's own `backup_health` is warning or critical
 * - `unverified`: the newest backup was not checked after it was made (with `require_verified`)
 * - `offsite/<storage>`: an off-site copy of the newest backup whose last transfer failed, or that
 *   is no longer on its storage
 *
 * `max_age` also decides whether an app's backups are watched at all: `off` (null) or an absent
 * environment type means "backups there are not watched", and none of the four is reported — an
 * operator who writes `development: off` does not want development's backup health either. Apps
 * outside any environment (environment_type null) use the `none` entry, absent by default: such apps
 * are scratch and service instances that usually carry no backup policy.
 */
import type { EnvironmentType, OffsiteCopy } from '../api/schemas.js';
import type { AppBackupState, NewestBackup } from '../collectors/views.js';
import type { BackupsSnapshot } from '../collectors/snapshot.js';
import { buildLabels, type LabelValue } from './build-labels.js';
import {
  environmentSeverity,
  PRODUCTION_CRITICAL,
  type EnvironmentSeverity,
} from './environment-severity.js';
import type { Finding, Severity } from './finding.js';
import { fingerprint } from './fingerprint.js';
import { formatDuration } from '../lib/format-duration.js';
import { oneLine } from './one-line.js';
import { parseTime, toIso } from '../lib/parse-time.js';

/** Options of the backups check (`checks.backups`). */
export interface BackupsOptions {
  /**
   * Largest allowed age of the newest backup per environment type; `none` applies to apps outside
   * any environment. null or absent: that environment's backups are not watched at all.
   */
  maxAgeMs: Partial<Record<EnvironmentType | 'none', number | null>>;
  /** Report a newest backup that was not verified. */
  requireVerified: boolean;
  /** Check the newest backup's off-site copies; absent: not checked. */
  offsite?: {
    /** Off-site copy states meaning the last transfer failed (default: the simulator's `failed`). */
    failedStates: readonly string[];
  };
  /** Severity of a missing or stale backup per environment type; default critical in production. */
  severity?: Partial<EnvironmentSeverity>;
}

/** Which of an app's backup problems a finding is. */
export type BackupProblem = 'stale' | 'health' | 'unverified' | 'offsite';

/** Why an off-site copy is a finding. */
export type OffsiteReason = 'transfer_failed' | 'not_on_storage';

/**
 * Why an off-site copy is a problem, or null. A copy with `on_storage` false that was never
 * uploaded (no `uploaded_at`, no error, no failed state) is an upload still under way, not a copy
 * that is "no longer" there.
 */
export function judgeOffsite(copy: OffsiteCopy, failedStates: readonly string[]): OffsiteReason | null {
  if (copy.error !== null || (copy.state !== null && failedStates.includes(copy.state))) return 'transfer_failed';
  if (!copy.on_storage && copy.uploaded_at !== null) return 'not_on_storage';
  return null;
}

/** One app and its newest backup (none: it has none), as the backups collector meets them. */
export interface AppBackups {
  app: AppBackupState;
  newest: NewestBackup | undefined;
}

/**
 * Whether the detector finds anything about this app: judged by the detector itself on a snapshot
 * of the one app (every finding is about one app), so the collector keeps exactly the apps it
 * would report and drops the others, with their newest backups, as it meets them.
 */
export function backupsConcern({ app, newest }: AppBackups, options: BackupsOptions, now: number): boolean {
  const one: BackupsSnapshot = { job: 'backups', takenAt: now, apps: [app], newestBackups: new Map(newest ? [[app.id, newest]] : []) };
  return backups(one, options, now).length > 0;
}

/** Finds backup problems of every watched app. */
export function backups(snapshot: BackupsSnapshot, options: BackupsOptions, now: number): Finding[] {
  const findings: Finding[] = [];
  for (const app of snapshot.apps) {
    const maxAge = options.maxAgeMs[app.environment_type ?? 'none'];
    if (maxAge === null || maxAge === undefined) continue;
    const newest = snapshot.newestBackups.get(app.id);
    // Every finding of this app: same labels and link; the fingerprint names the sub-problem.
    const make = (
      problem: BackupProblem,
      storage: string | null,
      f: Omit<Finding, 'fingerprint' | 'check' | 'labels' | 'url'>,
    ): Finding => ({
      fingerprint:
        storage === null
          ? fingerprint('backups', 'app', app.id, problem)
          : fingerprint('backups', 'app', app.id, problem, storage),
      check: 'backups',
      ...f,
      summary: oneLine(f.summary),
      labels: buildLabels('backups', { ...appLabels(app), problem, storage }),
      url: app.url,
    });
    const name = appName(app);

    // stale / missing. The newest time the source gives: the newest backup's, or the app's
    // last_backup_at when that is newer (or the backup record has no time yet: still running).
    const taken = newestTime(parseTime(newest?.taken_at), parseTime(app.last_backup_at));
    const staleSeverity = environmentSeverity(app.environment_type, { ...PRODUCTION_CRITICAL, ...options.severity });
    if (taken === null) {
      findings.push(
        make('stale', null, {
          severity: staleSeverity,
          summary: `${name} has no backup`,
          details: { app: name, max_age: formatDuration(maxAge), newest_backup: newest ? `${newest.name} (no time)` : 'none' },
          since: null,
          subject: { type: 'app', id: app.id },
        }),
      );
    } else if (now - taken > maxAge) {
      const details: Record<string, string> = {
        app: name,
        age: formatDuration(now - taken),
        max_age: formatDuration(maxAge),
        taken_at: new Date(taken).toISOString(),
      };
      if (newest) details.backup = newest.name;
      findings.push(
        make('stale', null, {
          severity: staleSeverity,
          summary: `Newest backup of ${name} is ${formatDuration(now - taken)} old (max ${formatDuration(maxAge)})`,
          details,
          since: new Date(taken + maxAge).toISOString(),
          subject: { type: 'app', id: app.id },
        }),
      );
    }

    // health: the service's own judgement.
    const health = healthSeverity(app.backup_health);
    if (health) {
      findings.push(
        make('health', null, {
          severity: health,
          summary: `Backup health of ${name} is ${app.backup_health}`,
          details: { app: name, backup_health: app.backup_health, last_backup_at: toIso(app.last_backup_at) ?? 'none' },
          since: null,
          subject: { type: 'app', id: app.id },
        }),
      );
    }

    if (!newest) continue;

    if (options.requireVerified && !newest.verified) {
      findings.push(
        make('unverified', null, {
          severity: 'warning',
          summary: `Newest backup of ${name} is not verified (${newest.name})`,
          details: backupDetails(name, newest),
          since: toIso(newest.taken_at),
          subject: { type: 'backup', id: newest.id },
        }),
      );
    }

    if (!options.offsite) continue;
    for (const copy of newest.offsite) {
      const reason = judgeOffsite(copy, options.offsite.failedStates);
      if (!reason) continue;
      const details = { ...backupDetails(name, newest), storage: copy.storage, ...copyDetails(copy), reason };
      const summary =
        reason === 'transfer_failed'
          ? `Off-site copy of the newest backup of ${name} on ${copy.storage} failed${copy.error ? `: ${copy.error}` : ''}`
          : `Off-site copy of the newest backup of ${name} is no longer on ${copy.storage}`;
      findings.push(
        make('offsite', copy.storage, {
          severity: 'warning',
          summary,
          details,
          since: null,
          subject: { type: 'backup', id: newest.id },
        }),
      );
    }
  }
  return findings;
}

/** The later of two times, either possibly unknown. */
function newestTime(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

/** backup_health as a severity; healthy and none are not findings. */
function healthSeverity(health: AppBackupState['backup_health']): Severity | null {
  if (health === 'critical') return 'critical';
  if (health === 'warning') return 'warning';
  return null;
}

/** "shop-prod (production)". */
function appName(app: AppBackupState): string {
  return `${app.name}${app.environment_type ? ` (${app.environment_type})` : ''}`;
}

/** The labels every backups finding of an app carries. */
function appLabels(app: AppBackupState): Record<string, LabelValue> {
  return {
    namespace: app.namespace,
    project: app.project,
    environment_type: app.environment_type,
    app: app.name,
    server: app.server,
  };
}

function backupDetails(name: string, backup: NewestBackup): Record<string, string> {
  const details: Record<string, string> = { app: name, backup: `${backup.name} (#${backup.id})` };
  const taken = toIso(backup.taken_at);
  if (taken) details.taken_at = taken;
  details.verified = backup.verified ? 'yes' : 'no';
  return details;
}

function copyDetails(copy: OffsiteCopy): Record<string, string> {
  const details: Record<string, string> = { on_storage: copy.on_storage ? 'yes' : 'no' };
  if (copy.state) details.state = copy.state;
  if (copy.error) details.error = copy.error;
  const uploaded = toIso(copy.uploaded_at);
  if (uploaded) details.uploaded_at = uploaded;
  return details;
}
