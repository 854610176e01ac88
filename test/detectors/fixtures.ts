/**
 * Builders of hand-made snapshots for detector tests. Every record is parsed by the API's own zod
 * schema, so a fixture that drifts from the contract fails loudly instead of testing a shape the
 * service never sends.
 */
import { expect } from 'vitest';
import {
  appListItemSchema,
  appRepositorySchema,
  appSchema,
  appUpgradeSchema,
  restorePointSchema,
  attentionSectionSchema,
  attentionSummarySchema,
  installerSchema,
  backupSchema,
  offsiteCopySchema,
  runListItemSchema,
  runSchema,
  runStepSchema,
  serverSchema,
  urlRecordSchema,
  type App,
  type AppListItem,
  type AppRepository,
  type AppUpgrade,
  type AttentionSection,
  type Backup,
  type Installer,
  type OffsiteCopy,
  type RestorePoint,
  type Run,
  type RunListItem,
  type RunStep,
  type Server,
  type UrlRecord,
} from '../../src/api/schemas.js';
import type {
  AppInFull,
  AttentionSnapshot,
  BulkJob,
  BulkRecords,
  InstallersSnapshot,
  BackupsSeen,
  BackupsSnapshot,
  MaintenanceSnapshot,
  RunsSnapshot,
  ServersSnapshot,
  Snapshot,
  UrlsSnapshot,
} from '../../src/collectors/snapshot.js';
import { seeBackup, type BackupStates } from '../../src/collectors/backups-seen.js';
import type { Detection } from '../../src/detectors/finding.js';
import { parseConfig } from '../../src/config/load-config.js';
import {
  detectorOptionsFromConfig,
  explainerFor,
  relevanceFor,
  type DetectorOptions,
} from '../../src/detectors/registry.js';
import type { Labels, Subject } from '../../src/lib/alert-vocabulary.js';
import { FAILED_BACKUP_STATES, RUNNING_BACKUP_STATES, SUCCEEDED_BACKUP_STATES } from '../../src/config/state-words.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
/** The tests' "now". */
export const NOW = Date.UTC(2026, 10, 1, 12, 0, 0);

/** An ISO timestamp `ms` before NOW (negative: after). */
export function ago(ms: number): string {
  return new Date(NOW - ms).toISOString();
}

/** An `apps.list` item. */
export function appListItem(o: Partial<AppListItem> = {}): AppListItem {
  return appListItemSchema.parse({
    id: 1,
    name: 'shop-prod',
    namespace: 'acme',
    project: 'shop',
    environment: 'Production',
    environment_type: 'production',
    version: '19.0',
    edition: 'enterprise',
    state: 'running',
    url: 'https://shop.example.com',
    server: 'web-01',
    deployed_at: ago(30 * DAY),
    updated_at: ago(DAY),
    backup_health: 'healthy',
    last_backup_at: ago(2 * HOUR),
    ...o,
  });
}

/** A full `apps.get` App. */
export function app(o: Partial<App> = {}): App {
  const { urls, repositories, upgrade, maintenance, ...rest } = o;
  return appSchema.parse({
    ...appListItem(rest),
    urls: urls ?? [],
    repositories: repositories ?? [],
    upgrade: upgrade ?? null,
    maintenance: maintenance ?? false,
  });
}

/** A repository of a full App: deployed from its branch's head, the branch still upstream. */
export function repository(o: Partial<AppRepository> = {}): AppRepository {
  return appRepositorySchema.parse({
    repository: 'shop',
    repository_url: 'https://github.com/acme/shop',
    branch: 'main',
    main: true,
    deployed_sha: '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d',
    head_sha: '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d',
    deployed_message: 'fix: rounding of invoice totals',
    up_to_date: true,
    checked_at: ago(HOUR),
    deleted_upstream: false,
    ...o,
  });
}

/** An open version upgrade of {@link app}'s default app (id 1), in test, waiting in standby. */
export function upgrade(o: Partial<AppUpgrade> = {}): AppUpgrade {
  return appUpgradeSchema.parse({
    id: 30,
    from_version: '18.0',
    to_version: '19.0',
    purpose: 'test',
    state: 'standby',
    source_app_id: 1,
    source_app: 'shop-prod',
    new_app_id: null,
    new_app: null,
    ...o,
  });
}

/** A `runs.list` item. */
export function runListItem(o: Partial<RunListItem> = {}): RunListItem {
  return runListItemSchema.parse({
    id: 100,
    workflow: 'app_update',
    action: 'update',
    state: 'done',
    retrying: false,
    namespace: 'acme',
    record: 'shop-prod',
    record_type: 'app',
    app_id: 1,
    project: 'shop',
    environment_type: 'production',
    created_at: ago(20 * MINUTE),
    updated_at: ago(10 * MINUTE),
    ...o,
  });
}

/** A run step. */
export function step(o: Partial<RunStep> = {}): RunStep {
  return runStepSchema.parse({
    name: 'pull_code',
    state: 'done',
    started_at: ago(20 * MINUTE),
    updated_at: ago(19 * MINUTE),
    reason: null,
    ...o,
  });
}

/** A `runs.get` Run. */
export function run(o: Partial<Run> = {}): Run {
  const { steps, watcher, ...rest } = o;
  return runSchema.parse({ ...runListItem(rest), steps: steps ?? [], watcher: watcher ?? null });
}

/** A `urls.list` record. */
export function urlRecord(o: Partial<UrlRecord> = {}): UrlRecord {
  return urlRecordSchema.parse({
    id: 10,
    url: 'https://shop.example.com',
    namespace: 'acme',
    app_id: 1,
    app: 'shop-prod',
    project: 'shop',
    environment_type: 'production',
    primary: true,
    state: 'active',
    ssl_status: 'valid',
    ssl_expires_at: new Date(NOW + 90 * DAY).toISOString(),
    public_check: 'passed',
    public_check_code: null,
    public_checked_at: ago(HOUR),
    ...o,
  });
}

/** An off-site copy of a backup. */
export function offsiteCopy(o: Partial<OffsiteCopy> = {}): OffsiteCopy {
  return offsiteCopySchema.parse({
    storage: 's3-eu',
    type: 's3',
    on_storage: true,
    state: 'uploaded',
    uploaded_at: ago(HOUR),
    error: null,
    ...o,
  });
}

/** A backup. */
export function backup(o: Partial<Backup> = {}): Backup {
  return backupSchema.parse({
    id: 500,
    name: 'shop-prod-2026-11-01',
    namespace: 'acme',
    app_id: 1,
    app: 'shop-prod',
    project: 'shop',
    environment_type: 'production',
    format: 'zip',
    size_mb: 120,
    taken_at: ago(2 * HOUR),
    automated: true,
    state: 'done',
    storage: 'local',
    on_server: true,
    verified: true,
    offsite: [offsiteCopy()],
    ...o,
  });
}

/** An attention section (items as given; the schema keeps them open). */
export function section(o: Partial<AttentionSection> = {}): AttentionSection {
  const items = o.items ?? [];
  return attentionSectionSchema.parse({
    rule: 'backup_failed',
    severity: 'danger',
    label: 'Failed backups',
    kind: 'app',
    count: items.length,
    items,
    ...o,
  });
}

/** Runs snapshot: full Runs also go into `details`; apps are keyed by id. */
export function runsSnapshot(runs: (RunListItem | Run)[], apps: AppListItem[] = [appListItem()]): RunsSnapshot {
  const details = new Map<number, Run>();
  for (const r of runs) if ('steps' in r) details.set(r.id, runSchema.parse(r));
  return {
    job: 'runs',
    takenAt: NOW,
    runs: runs.map((r) => runListItemSchema.parse(r)),
    details,
    apps: new Map(apps.map((a) => [a.id, a])),
  };
}

/** URLs snapshot. */
export function urlsSnapshot(urls: UrlRecord[], apps: AppListItem[] = [appListItem()]): UrlsSnapshot {
  return { job: 'urls', takenAt: NOW, urls, apps: new Map(apps.map((a) => [a.id, a])) };
}

/** The simulator's backup state words, as the config's defaults give them. */
export const BACKUP_STATES: BackupStates = {
  succeeded_states: SUCCEEDED_BACKUP_STATES,
  running_states: RUNNING_BACKUP_STATES,
  failed_states: FAILED_BACKUP_STATES,
};

/**
 * Backups snapshot: each app's backups as given (newest first), every one met, as a read that went
 * to the end of the app's list; `stopped` marks apps whose read stopped early, by app id.
 */
export function backupsSnapshot(
  apps: AppListItem[],
  backups: Backup[],
  stopped: Record<number, BackupsSeen['stopped']> = {},
  read: { states?: BackupStates; history?: number } = {},
): BackupsSnapshot {
  const seen = new Map<number, BackupsSeen>();
  const states = read.states ?? BACKUP_STATES;
  for (const b of backups)
    if (b.app_id !== null) seen.set(b.app_id, seeBackup(seen.get(b.app_id), b, states, read.history ?? 0));
  for (const [id, why] of Object.entries(stopped)) {
    const one = seen.get(Number(id));
    if (one && why) one.stopped = why;
  }
  return { job: 'backups', takenAt: NOW, apps, backups: seen };
}

/** Attention snapshot; `total` is the sum of counts, as the service gives it. */
export function attentionSnapshot(sections: AttentionSection[]): AttentionSnapshot {
  const summary = attentionSummarySchema.parse({ sections, total: sections.reduce((n, s) => n + s.count, 0) });
  return { job: 'attention', takenAt: NOW, summary };
}

/** A restore point of {@link app}'s default app (id 1): an update applied an hour ago, not held. */
export function restorePoint(o: Partial<RestorePoint> = {}): RestorePoint {
  return restorePointSchema.parse({
    id: 80,
    app_id: 1,
    at: ago(HOUR),
    action: 'update',
    outcome: 'applied',
    run_id: 100,
    commits: [],
    modules: [],
    backup_id: 500,
    backup: 'shop-prod-20261101-1100.zip',
    backup_verified: true,
    rollback_of_id: null,
    held: false,
    instant_undo: true,
    kept_until: ago(-7 * DAY),
    ...o,
  });
}

/** An app as the maintenance job meets it: read in full, with the restore points read of it (none: not read). */
export function inFull(full: App, restorePoints?: readonly RestorePoint[]): AppInFull {
  return { app: full, restorePoints };
}

/** Maintenance snapshot. */
export function maintenanceSnapshot(
  apps: App[],
  restorePoints: ReadonlyMap<number, readonly RestorePoint[]> = new Map(),
): MaintenanceSnapshot {
  return { job: 'maintenance', takenAt: NOW, apps, restorePoints };
}

/** A `servers.list` item; its name is the `server` of {@link appListItem}'s default app. */
export function server(o: Partial<Server> = {}): Server {
  return serverSchema.parse({
    id: 7,
    name: 'web-01',
    namespace: 'acme',
    state: 'running',
    provider: 'hetzner',
    size: 'cx42',
    region: 'fsn1',
    image: 'ubuntu-24.04',
    lb_engine: 'traefik',
    public_ip: '203.0.113.7',
    app_count: 12,
    ...o,
  });
}

/** Servers snapshot. */
export function serversSnapshot(
  servers: Server[],
  appEnvironments: ServersSnapshot['appEnvironments'] = new Map(),
  appsUnread?: string,
): ServersSnapshot {
  return { job: 'servers', takenAt: NOW, servers, appEnvironments, ...(appsUnread && { appsUnread }) };
}

/**
 * What every finding must satisfy whatever the detector: unique fingerprints, labels with known
 * values only, a one-line summary, string details.
 */
export function expectWellFormed(findings: readonly Detection<string>[]): void {
  const fingerprints = findings.map((f) => f.fingerprint);
  expect(new Set(fingerprints).size).toBe(fingerprints.length);
  for (const f of findings) {
    expect(f.fingerprint.startsWith(`${f.check}/`)).toBe(true);
    expect(f.labels.check).toBe(f.check);
    for (const [key, value] of Object.entries(f.labels)) {
      expect(typeof value, `label ${key} of ${f.fingerprint}`).toBe('string');
      expect(value, `label ${key} of ${f.fingerprint}`).not.toMatch(/^(null|undefined|)$/);
    }
    expect(f.summary).not.toMatch(/[\r\n]/);
    expect(f.summary).not.toMatch(/\b(undefined|null|NaN)\b/);
    for (const value of Object.values(f.details)) expect(typeof value).toBe('string');
  }
}

/** The `checks` section of a config made of `yaml` (and a placeholder api section). */
export function checksOf(yaml: string) {
  return parseConfig(`api: { base_url: "http://127.0.0.1:1", token: t }\n${yaml}`, {}, 'test.yaml').checks;
}

/** The detectors' options of config `yaml`: each enabled check's section as parsed, defaults filled. */
export const optionsOf = (yaml: string) => detectorOptionsFromConfig(checksOf(yaml));

/**
 * The names of the records a bulk job keeps with the checks of config `yaml`: those an enabled
 * check of the job could find a problem in (`relevanceFor`).
 */
export function keptBy<J extends BulkJob>(job: J, yaml: string, records: Record<string, BulkRecords[J]>): string[] {
  const keep = relevanceFor(optionsOf(yaml), NOW)[job]!;
  return Object.entries(records)
    .filter(([, record]) => keep(record))
    .map(([name]) => name);
}

/** An `installers.list` item: a service of {@link app}'s default app, on its server, running. */
export function installer(o: Partial<Installer> = {}): Installer {
  return installerSchema.parse({
    id: 60,
    name: 'postgres-60',
    namespace: 'acme',
    type: 'postgres',
    app: 'shop-prod',
    state: 'running',
    server: 'web-01',
    url: 'https://postgres-60.acme.svc.example.com',
    platform_login: true,
    ...o,
  });
}

/** Installers snapshot. */
export function installersSnapshot(installers: Installer[]): InstallersSnapshot {
  return { job: 'installers', takenAt: NOW, installers };
}

/**
 * Why the alert of `finding` is over in `snapshot`, as its check says it when the lifecycle
 * resolves it (`explainerFor`): the resolution text each rule's table tests.
 */
export function resolutionOf(
  finding: { check: string; subject?: Subject | null | undefined; labels: Labels; details: Record<string, string> },
  snapshot: Snapshot,
  options: DetectorOptions,
): string | null {
  return explainerFor(snapshot, options)({ ...finding, subject: finding.subject ?? null });
}
