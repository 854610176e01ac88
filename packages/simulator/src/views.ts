/**
 * Turns simulator records into the API's answer shapes (`src/api/schemas.ts`): numeric times to
 * strings in the simulator's time format, ids to names, and the fields that follow from the time
 * (certificate status, backup health, whether a backup is still on the server).
 */
import type {
  App,
  AppListItem,
  Backup,
  BackupHealth,
  EnvironmentType,
  Installer,
  Project,
  RestorePoint,
  Run,
  RunListItem,
  Server,
  SslStatus,
  UrlRecord,
} from '../../../src/api/schemas.js';
import { hash32 } from './prng.js';
import type { RunEngine } from './run-engine.js';
import type { StateWords } from './state-words.js';
import type { TimeFormatter } from './time-format.js';
import type {
  AppRec,
  BackupRec,
  InstallerRec,
  ProjectRec,
  RepositoryRec,
  RestorePointRec,
  RunRec,
  ServerRec,
  SimState,
  UrlRec,
} from './sim-state.js';
import { PUBLIC_CHECK_EVERY_MS, REPOSITORY_READ_EVERY_MS } from './sim-state.js';
import { VOCABULARY } from './vocabulary.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A certificate this close to its end is `expiring_soon`. */
export const SSL_EXPIRING_WITHIN_MS = 14 * DAY;
/** Backups older than this on the server are only left off-site. */
const ON_SERVER_MS = 14 * DAY;
/** Age of the newest backup at which backup_health turns warning / critical, per environment type. */
export const BACKUP_AGE_LIMITS: Record<EnvironmentType | 'none', { warning: number; critical: number }> = {
  production: { warning: 26 * HOUR, critical: 72 * HOUR },
  staging: { warning: 8 * DAY, critical: 16 * DAY },
  development: { warning: 30 * DAY, critical: 60 * DAY },
  none: { warning: 30 * DAY, critical: 60 * DAY },
};

/**
 * When the outside check last ran: the recorded time, moved on by whole check periods while the
 * check runs (a URL with a verdict whose check has not stopped), so a long session does not age
 * every URL; the record itself is not changed by a read.
 */
function publicCheckedAt(u: UrlRec, now: number): number | null {
  const at = u.publicCheckedAt;
  return at === null || u.publicCheck === null || u.checkStopped ? at : lastRun(at, PUBLIC_CHECK_EVERY_MS, now);
}

/** When the platform last read a repository: as {@link publicCheckedAt}, while its reads have not stopped. */
function repositoryCheckedAt(r: RepositoryRec, now: number): number | null {
  const at = r.checkedAt;
  return at === null || r.readStopped ? at : lastRun(at, REPOSITORY_READ_EVERY_MS, now);
}

/** The last run by `now` of something that ran at `at` and runs again every `every` ms. */
function lastRun(at: number, every: number, now: number): number {
  return now - at < every ? at : at + Math.floor((now - at) / every) * every;
}

/** A time in UTC ISO form, whatever the time format: for names built from a time (a backup's file name), not for timestamp fields. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** Apps and other records that `include_deleted=false` leaves out. */
export function isGone(state: string): boolean {
  return state === VOCABULARY.app.deleted || state === VOCABULARY.app.disabled;
}

/** Renders records as answers, at one point of simulated time. */
export class Views {
  constructor(
    private readonly state: SimState,
    private readonly engine: RunEngine,
    private readonly times: TimeFormatter,
    private readonly words: StateWords,
  ) {}

  /** A timestamp field as the service writes it (every one goes through here). */
  time(ms: number | null): string | null {
    return this.times.write(ms);
  }

  /** Certificate status, following the expiry date and the time. */
  sslStatus(url: UrlRec, now: number): SslStatus {
    if (url.sslFixed) return url.sslFixed;
    if (url.sslExpiresAt === null) return 'unknown';
    if (url.sslExpiresAt <= now) return 'expired';
    return url.sslExpiresAt - now <= SSL_EXPIRING_WITHIN_MS ? 'expiring_soon' : 'valid';
  }

  /** The app's newest finished backup, if any. */
  newestDoneBackup(appId: number): BackupRec | undefined {
    for (const b of this.state.backupIndex.byApp(appId)) if (b.state === VOCABULARY.backup.done) return b;
    return undefined;
  }

  /** Backup health from the age of the newest finished backup. */
  backupHealth(app: AppRec, now: number): BackupHealth {
    const newest = this.newestDoneBackup(app.id);
    if (!newest) return 'none';
    const limits = BACKUP_AGE_LIMITS[app.envType ?? 'none'];
    const age = now - newest.takenAt;
    return age >= limits.critical ? 'critical' : age >= limits.warning ? 'warning' : 'healthy';
  }

  appListItem(app: AppRec, now: number): AppListItem {
    const primary = app.urlIds.map((id) => this.state.urls.get(id)).find((u) => u?.primary);
    const newest = this.newestDoneBackup(app.id);
    return {
      id: app.id,
      name: app.name,
      namespace: this.state.namespace(app.nsId).code,
      project: this.state.projectOf(app).name,
      environment: app.environment,
      environment_type: app.envType,
      version: app.version,
      edition: app.edition,
      state: this.words.write('app', app.state),
      url: primary?.url ?? null,
      server: app.serverId === null ? null : (this.state.servers.get(app.serverId)?.name ?? null),
      deployed_at: this.time(app.deployedAt),
      updated_at: this.time(app.updatedAt),
      backup_health: this.backupHealth(app, now),
      last_backup_at: this.time(newest?.takenAt ?? null),
    };
  }

  app(app: AppRec, now: number): App {
    const upgrade = app.upgrade;
    const newApp = upgrade?.newAppId ? this.state.apps.get(upgrade.newAppId) : undefined;
    const sourceApp = upgrade ? this.state.apps.get(upgrade.sourceAppId) : undefined;
    return {
      ...this.appListItem(app, now),
      urls: app.urlIds.map((id) => {
        const u = this.state.urls.get(id) as UrlRec;
        return { url: u.url, ...this.urlState(u, now) };
      }),
      repositories: app.repositories.map((r) => ({
        repository: r.repository,
        repository_url: r.repositoryUrl,
        branch: r.branch,
        main: r.main,
        deployed_sha: r.deployedSha,
        head_sha: r.headSha,
        deployed_message: r.deployedMessage,
        up_to_date: r.deployedSha === null || r.headSha === null ? null : r.deployedSha === r.headSha,
        checked_at: this.time(repositoryCheckedAt(r, now)),
        deleted_upstream: r.deletedUpstream,
      })),
      upgrade: upgrade
        ? {
            id: upgrade.id,
            from_version: upgrade.fromVersion,
            to_version: upgrade.toVersion,
            purpose: upgrade.purpose,
            state: this.words.write('upgrade', upgrade.state),
            source_app_id: upgrade.sourceAppId,
            source_app: sourceApp?.name ?? app.name,
            new_app_id: upgrade.newAppId,
            new_app: newApp?.name ?? null,
          }
        : null,
      maintenance: app.maintenance,
    };
  }

  url(u: UrlRec, now: number): UrlRecord {
    const app = this.state.apps.get(u.appId) as AppRec;
    return {
      id: u.id,
      url: u.url,
      namespace: this.state.namespace(u.nsId).code,
      app_id: app.id,
      app: app.name,
      project: this.state.projectOf(app).name,
      environment_type: app.envType,
      ...this.urlState(u, now),
    };
  }

  /** A URL's state, certificate and outside check: the same fields in `apps.get` and `urls.list`. */
  private urlState(u: UrlRec, now: number): Omit<App['urls'][number], 'url'> {
    return {
      primary: u.primary,
      state: this.words.write('url', u.state),
      ssl_status: this.sslStatus(u, now),
      ssl_expires_at: this.time(u.sslExpiresAt),
      public_check: u.publicCheck,
      public_check_code: u.publicCheckCode,
      public_checked_at: this.time(publicCheckedAt(u, now)),
    };
  }

  backup(b: BackupRec, now: number): Backup {
    const app = this.state.apps.get(b.appId) as AppRec;
    const ns = this.state.namespace(b.nsId);
    const done = b.state === VOCABULARY.backup.done;
    const stamp = iso(b.takenAt)?.slice(0, 16).replace(/[-:]/g, '').replace('T', '-') ?? '';
    const offsite =
      b.offsite ??
      (done
        ? [
            {
              storage: ns.storage,
              type: 's3',
              onStorage: true,
              state: VOCABULARY.offsite.uploaded,
              uploadedAt: b.takenAt + (3 + (hash32(b.id) % 20)) * 60_000,
              error: null,
            },
          ]
        : []);
    return {
      id: b.id,
      name: `${app.name}-${stamp}.${b.format}`,
      namespace: ns.code,
      app_id: app.id,
      app: app.name,
      project: this.state.projectOf(app).name,
      environment_type: app.envType,
      format: b.format,
      size_mb: b.sizeMb,
      taken_at: this.time(b.takenAt),
      automated: b.automated,
      state: this.words.write('backup', b.state),
      storage: 'local',
      on_server: done && !b.offServer && now - b.takenAt < ON_SERVER_MS,
      verified: b.verified,
      offsite: offsite.map((o) => ({
        storage: o.storage,
        type: o.type,
        on_storage: o.onStorage,
        state: this.words.write('offsite', o.state),
        uploaded_at: this.time(o.uploadedAt),
        error: o.error,
      })),
    };
  }

  runListItem(run: RunRec): RunListItem {
    const app = run.appId === null ? undefined : this.state.apps.get(run.appId);
    return {
      id: run.id,
      workflow: run.workflow,
      action: run.action,
      state: this.words.write('run', run.state),
      retrying: run.retrying,
      namespace: this.state.namespace(run.nsId).code,
      record: run.record,
      record_type: run.recordType,
      app_id: run.appId,
      project: app ? this.state.projectOf(app).name : null,
      environment_type: app?.envType ?? null,
      created_at: this.time(run.createdAt),
      updated_at: this.time(run.updatedAt),
    };
  }

  run(run: RunRec): Run {
    const watcher = this.engine.watcherOf(run);
    return {
      ...this.runListItem(run),
      steps: this.engine.stepsOf(run).map((s) => ({
        name: s.name,
        state: this.words.write('step', s.state),
        started_at: this.time(s.startedAt),
        updated_at: this.time(s.updatedAt),
        reason: s.reason,
      })),
      watcher: watcher ? { state: watcher.state, progress: watcher.progress, reason: watcher.reason } : null,
    };
  }

  /**
   * App counts per environment and per server: the apps `apps.list` gives (not deleted or
   * disabled), of those `keep` lets through (the token's readable environments; null: all).
   */
  appCounts(keep: ((app: AppRec) => boolean) | null = null): {
    byEnv: Map<number, number>;
    byServer: Map<number, number>;
  } {
    const byEnv = new Map<number, number>();
    const byServer = new Map<number, number>();
    for (const app of this.state.apps.values()) {
      if (isGone(app.state) || (keep && !keep(app))) continue;
      if (app.envId !== null) byEnv.set(app.envId, (byEnv.get(app.envId) ?? 0) + 1);
      if (app.serverId !== null) byServer.set(app.serverId, (byServer.get(app.serverId) ?? 0) + 1);
    }
    return { byEnv, byServer };
  }

  /** A project, with the environments whose type `sees` (the caller's role sees them; default all). */
  project(p: ProjectRec, byEnv: Map<number, number>, sees: (type: EnvironmentType) => boolean = () => true): Project {
    return {
      id: p.id,
      name: p.name,
      code: p.code,
      namespace: this.state.namespace(p.nsId).code,
      plan: p.plan,
      disabled: p.disabled,
      environments: p.envIds.flatMap((id) => {
        const env = this.state.environments.get(id);
        const type = env?.type ?? 'development';
        return sees(type) ? [{ id, name: env?.name ?? '', type, app_count: byEnv.get(id) ?? 0 }] : [];
      }),
    };
  }

  server(s: ServerRec, byServer: Map<number, number>): Server {
    return {
      id: s.id,
      name: s.name,
      namespace: this.state.namespace(s.nsId).code,
      state: this.words.write('server', s.state),
      provider: s.provider,
      size: s.size,
      region: s.region,
      image: s.image,
      lb_engine: s.lbEngine,
      public_ip: s.publicIp,
      app_count: byServer.get(s.id) ?? 0,
    };
  }

  installer(i: InstallerRec): Installer {
    return {
      id: i.id,
      name: i.name,
      namespace: this.state.namespace(i.nsId).code,
      type: i.type,
      app: i.appId === null ? null : (this.state.apps.get(i.appId)?.name ?? null),
      state: this.words.write('installer', i.state),
      server: i.serverId === null ? null : (this.state.servers.get(i.serverId)?.name ?? null),
      url: i.url,
      platform_login: i.platformLogin,
    };
  }

  restorePoint(p: RestorePointRec): RestorePoint {
    const backup = p.backupId === null ? undefined : this.state.backups.get(p.backupId);
    const app = this.state.apps.get(p.appId);
    return {
      id: p.id,
      app_id: p.appId,
      at: this.time(p.at),
      action: p.action,
      outcome: p.outcome,
      run_id: p.runId,
      commits: p.commits,
      modules: p.modules,
      backup_id: p.backupId,
      backup:
        backup && app
          ? `${app.name}-${iso(backup.takenAt)?.slice(0, 16).replace(/[-:]/g, '').replace('T', '-')}.${backup.format}`
          : null,
      backup_verified: backup?.verified ?? false,
      rollback_of_id: p.rollbackOfId,
      held: p.held,
      instant_undo: p.instantUndo,
      kept_until: this.time(p.keptUntil),
    };
  }
}
