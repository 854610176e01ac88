/**
 * What a collector hands to the detectors: one complete read of one source, per scheduled job.
 *
 * A snapshot is COMPLETE: every page of every list it is built from was read. A read that fails
 * part-way produces no snapshot at all (the collector fails whole), because detectors treat
 * "absent from the snapshot" as "the problem is over" and a partial read would resolve alerts
 * falsely. The one exception is flagged: a read cut by a hard bound (`jobs.read_ceiling`, a list's
 * items, an answer's bytes) hands back what it read (`partial`, `read-so-far.ts`), which the job
 * cycle lets fire alerts and never resolve one. One record that cannot be read (refused by id,
 * unparseable, a value beyond the stated ones) is not a failed read: it is set aside
 * (`CollectorContext.quarantine`), the job cycle holds its alerts, and the snapshot is complete for
 * every other record. Records are the API's own types (inferred from `src/api/schemas.ts`), or for apps the
 * fields of them the detectors read (`views.ts`), the values as answered: the collectors parse,
 * they do not interpret; every judgement is made by a detector.
 *
 * Types only: the collectors that build these live beside this file.
 */
import type { StateWordTally } from './state-word-tally.js';
import type {
  AttentionSummary,
  EnvironmentType,
  Installer,
  Run,
  RunListItem,
  Server,
  UrlRecord,
} from '../api/schemas.js';
import type { SettledRun } from './settled-runs.js';
import type { OpenSubject } from '../lib/alert-vocabulary.js';
import type { AppBackupState, AppLabels, MaintenanceApp, NewestBackup, NewestRestorePoint } from './views.js';

/** The scheduled jobs that produce a snapshot (`jobs.*` in the config, minus the pure-cron ones). */
export type SnapshotJob = Snapshot['job'];

/** Fields every snapshot has. */
interface SnapshotBase {
  /** When the read started (ms since the epoch, from the collector's clock). */
  takenAt: number;
  /**
   * The `state` words of every record of the kinds the job's checks judge by state, counted as read
   * (kept or not): runs, servers, apps, open upgrades, marketplace services, each app's newest
   * backup. Absent for the other jobs.
   */
  stateWords?: StateWordTally[];
  /**
   * Set only on what a read cut by a hard bound had read so far (`read-so-far.ts`): why it was cut.
   * Its findings may fire; nothing absent from it resolves.
   */
  partial?: string;
}

/** The `runs` job: recent runs, with the detail the run detectors need. */
export interface RunsSnapshot extends SnapshotBase {
  job: 'runs';
  /**
   * Every run created within the configured look-back (`checks.failed_runs.lookback`), newest
   * first, plus every run still active however old, plus the runs that open failed_runs and
   * stuck_runs alerts are about (read by id) with their app's runs since: an alert already open is
   * decided by its run (or a newer run of the same app and action), never by the look-back. With
   * {@link settledNewest}, the window's settled runs are summarised there instead.
   */
  runs: RunListItem[];
  /**
   * The settled runs of the look-back window that `runs` leaves out, summarised per group (same
   * app or record, and action: `groupKey` in `settled-runs.ts`) as where the newest one
   * stands in the newest-first order. A settled run (in neither a failed nor an active state) is
   * not a finding; all it decides is that older failures of its group are over, which this keeps.
   * Absent: every run read is in `runs`.
   */
  settledNewest?: ReadonlyMap<string, SettledRun>;
  /**
   * `runs.get` of each listed run whose state is a failed or an active state (the configured
   * `failed_states` and `active_states`), keyed by run id: steps and watcher. A run listed here
   * but missing from `details` is judged from its list item alone (no step, no watcher). A collector
   * may add more runs than that; detectors use whatever is present.
   */
  details: ReadonlyMap<number, Run>;
  /**
   * What each open (pending or firing) failed_runs alert last said of its run, keyed by run id:
   * the alert's details. A run goes back to running when it is retried (reference §4, the same
   * run id), so its alert follows it through the retry: failed_runs reads here whether a run
   * running again is the retry of a failure already told, and whether a failure is the retry's
   * (`run-lineage.ts`). Absent: none open.
   */
  openFailures?: ReadonlyMap<number, Readonly<Record<string, string>>>;
  /**
   * The apps of the runs that can be findings (in a failed or active state, or with a detail), from
   * `apps.list`, keyed by app id: name, server, project and URL for labels and links. An app
   * missing here (deleted since) leaves those labels out.
   */
  apps: ReadonlyMap<number, AppLabels>;
}

/** The `urls` job: every URL record with its certificate and outside-check state. */
export interface UrlsSnapshot extends SnapshotBase {
  job: 'urls';
  /**
   * The records of `urls.list` (all pages read) that an enabled URL check could find a problem in
   * (`CollectorContext.relevance`; every record when none is given). A record left out is one no
   * check would report: its alert resolves exactly as if it had been read and judged fine.
   */
  urls: UrlRecord[];
  /** The apps those URLs belong to (`apps.list`), keyed by app id: server label and app URL. */
  apps: ReadonlyMap<number, AppLabels>;
}

/**
 * What was read of one app's backups, newest first (`backups.list`): the three the backups check
 * judges, each possibly the same record, kept as met (see `seeBackup` in
 * `backups-seen.ts`), so a walk over thousands of backups holds three references per app.
 */
export interface BackupsSeen {
  /** The newest backup, whatever its state (running, failed, unknown, or the good one). */
  newest: NewestBackup;
  /** The newest backup that finished, well or not (its state in the succeeded or failed words). */
  finished?: NewestBackup;
  /** The newest backup that finished well (a succeeded state, a time and a full format): the one staleness, verification, size and off-site copies judge. */
  good?: NewestBackup;
  /**
   * The good backups older than `good` (id and `size_mb`, null when not given), newest first, up
   * to `checks.backups.size_history`: what `good`'s size is compared with (and, by id, what an
   * open alert about a backup that a newer one replaced is about). Absent: none read.
   */
  previous?: { id: number; size_mb: number | null }[];
  /**
   * Why the read of the app's backups ended before it met `good`, when it did not reach the app's
   * oldest backup. `max_age`: `finished` was known and the backups had grown older than the app's
   * max_age, so a good one further down is stale anyway (what it would say of verification and
   * off-site copies is unknown). `bound`: the per-app read's bound, or the app's list moved while
   * paged: whether a good backup (and a finished one, when `finished` is absent) is newer than
   * max_age is unknown. Absent: `good` is the newest good backup, or the app has none.
   */
  stopped?: 'max_age' | 'bound';
}

/** The `backups` job: every app and what was read of its backups. */
export interface BackupsSnapshot extends SnapshotBase {
  job: 'backups';
  /**
   * Every app of `apps.list` (deleted and disabled ones left out, as the API does by default); only
   * those the backups check could report when `CollectorContext.relevance` is given.
   */
  apps: AppBackupState[];
  /**
   * What was read of each app's backups ({@link BackupsSeen}), keyed by app id. An app of which no
   * backup was read (it has none, or it is in an environment whose backups are not watched) is
   * absent.
   */
  backups: ReadonlyMap<number, BackupsSeen>;
}

/** The `attention` job: the service's own dashboard summary. */
export interface AttentionSnapshot extends SnapshotBase {
  job: 'attention';
  /**
   * `attention.list` as answered. With several configured namespaces the collector merges the
   * per-namespace answers: sections of the same rule are concatenated (items and counts added).
   */
  summary: AttentionSummary;
  /**
   * What the daemon's own checks report as the read ended: the records the open alerts of the other
   * jobs are about. The attention check folds an item about one of them into that alert instead of
   * alerting on it again. Absent: nothing reported.
   */
  reported?: readonly OpenSubject[];
  /**
   * The checks of ours that run (enabled, scheduled, not switched off for a missing permission):
   * an item of a rule none of them could report alerts at once. Absent: every check counts.
   */
  reporting?: readonly string[];
}

/**
 * The `maintenance` job: what only `apps.get` carries of every app (maintenance flag, repositories,
 * open upgrade), and, when the restore_points check is on, each app's newest restore points.
 */
export interface MaintenanceSnapshot extends SnapshotBase {
  job: 'maintenance';
  /**
   * `apps.get` of every app of `apps.list`, each cut to the {@link MaintenanceApp} fields; only
   * those an enabled check could report (`CollectorContext.relevance`; every app when none is given).
   */
  apps: MaintenanceApp[];
  /**
   * The newest restore points (`restore_points.list`, one page) of each app of {@link apps}, keyed
   * by app id, newest first; empty when the restore_points check is off (none read).
   */
  restorePoints: ReadonlyMap<number, readonly NewestRestorePoint[]>;
  /**
   * What the daemon's other checks report as the read ended (open alerts of the other jobs, with
   * their details): the upgrades check folds a failed upgrade into the alert of its failed run.
   * Absent: nothing reported.
   */
  reported?: readonly OpenSubject[];
}

/** The `servers` job: every server and its state, and the environments of the apps on a bad one. */
export interface ServersSnapshot extends SnapshotBase {
  job: 'servers';
  /** Every record of `servers.list`, all pages (deleted servers left out, as the API does by default). */
  servers: Server[];
  /**
   * For each server in a bad state (`checks.servers.bad_states`) with apps on it, keyed by server
   * id, the environment type of each of its apps (`apps.list?server_id=…`, all pages), so its alert
   * pages like them. A server absent has no app, or its apps could not be listed (see
   * {@link appsUnread}).
   */
  appEnvironments: ReadonlyMap<number, readonly (EnvironmentType | null)[]>;
  /** Why the apps on the bad servers could not be listed (the token may not list apps); absent: they were. */
  appsUnread?: string;
}

/** The `installers` job: every marketplace service (installer) and its state. */
export interface InstallersSnapshot extends SnapshotBase {
  job: 'installers';
  /** Every record of `installers.list`, all pages (deleted ones left out, as the API does by default). */
  installers: Installer[];
}

/** Any snapshot; `job` tells which. */
export type Snapshot =
  | RunsSnapshot
  | UrlsSnapshot
  | BackupsSnapshot
  | AttentionSnapshot
  | MaintenanceSnapshot
  | ServersSnapshot
  | InstallersSnapshot;

/** One app and what was read of its backups (none: no backup read), as the backups collector meets them. */
export interface AppBackups {
  app: AppBackupState;
  seen: BackupsSeen | undefined;
}

/** One app read in full, and its newest restore points (none read: the restore_points check is off). */
export interface AppInFull {
  app: MaintenanceApp;
  restorePoints: readonly NewestRestorePoint[] | undefined;
}

/**
 * The records a job reads in bulk, by job: a collector meets them one at a time (a page, an answer)
 * and keeps only those its checks declare relevant ({@link Relevance}).
 */
export interface BulkRecords {
  /** A `urls.list` record. */
  urls: UrlsSnapshot['urls'][number];
  /** An `apps.get` answer, as the maintenance job keeps it, with its newest restore points. */
  maintenance: AppInFull;
  /** An app of `apps.list` with what was read of its backups. */
  backups: AppBackups;
}

/** A job that reads records in bulk. */
export type BulkJob = keyof BulkRecords;

/**
 * Whether an enabled check could find a problem in a record, per job that reads records in bulk
 * (built from the checks by `relevanceFor` in the detector registry). Collectors keep only such
 * records: one left out is one no check would report, exactly as if it had been read and judged
 * fine. A job absent here keeps every record.
 */
export type Relevance = { readonly [J in BulkJob]?: (record: BulkRecords[J]) => boolean };

/**
 * A read a collector makes beyond its job's own only when an enabled check asks for it (the check's
 * `reads`): `restore_points`, each app's newest restore points (one more request per app).
 */
export type ExtraRead = 'restore_points';
