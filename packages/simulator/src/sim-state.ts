/**
 * The simulated service's data: plain records with numeric times, indexed by id, by app and by
 * namespace. Everything hangs off one SimState instance (no module-level state), so several
 * simulators can run in one process.
 */
import type { EnvironmentType, SslStatus, WatcherState } from '../../../src/api/schemas.js';
import { NewestFirstIndex } from './newest-first-index.js';
import { VOCABULARY, WORKFLOWS, type WorkflowName } from './vocabulary.js';

/** A namespace: its code (what `namespace` parameters take) and its off-site storage. */
export interface NamespaceRec {
  id: number;
  code: string;
  name: string;
  /** Off-site storage of this namespace's backups. */
  storage: string;
}

/** An environment of a project, with its type. */
export interface EnvironmentRec {
  id: number;
  name: string;
  type: EnvironmentType;
  projectId: number;
}

/** A project of a namespace and its environments. */
export interface ProjectRec {
  id: number;
  name: string;
  code: string;
  nsId: number;
  plan: string;
  disabled: boolean;
  deleted: boolean;
  envIds: number[];
}

/** A server apps are deployed on; its `state` is what the servers check judges. */
export interface ServerRec {
  id: number;
  name: string;
  nsId: number;
  state: string;
  provider: string;
  size: string;
  region: string;
  image: string;
  lbEngine: string;
  publicIp: string;
}

/** A code repository of an app: what is deployed and what its branch head is. */
export interface RepositoryRec {
  repository: string;
  repositoryUrl: string | null;
  branch: string;
  main: boolean;
  deployedSha: string | null;
  headSha: string | null;
  deployedMessage: string | null;
  checkedAt: number | null;
  deletedUpstream: boolean;
  /**
   * The platform stopped reading this repository (a revoked deploy key, a repository moved or made
   * private): `checkedAt` no longer moves. Otherwise a repository read once is read again every
   * {@link REPOSITORY_READ_EVERY_MS} (the view says when last).
   */
  readStopped?: boolean;
}

/** How often the simulated platform reads an app's repository (one it has read, whose reads run). */
export const REPOSITORY_READ_EVERY_MS = 2 * 3_600_000;

/** A version upgrade of an app under way. */
export interface UpgradeRec {
  id: number;
  fromVersion: string;
  toVersion: string;
  purpose: 'test' | 'production';
  state: string;
  sourceAppId: number;
  newAppId: number | null;
}

/** An app: where it runs, its URLs and repositories, and its maintenance and lock flags. */
export interface AppRec {
  id: number;
  name: string;
  nsId: number;
  projectId: number;
  envId: number | null;
  environment: string;
  envType: EnvironmentType | null;
  version: string;
  edition: 'community' | 'enterprise';
  state: string;
  serverId: number | null;
  deployedAt: number | null;
  updatedAt: number | null;
  urlIds: number[];
  repositories: RepositoryRec[];
  upgrade: UpgradeRec | null;
  maintenance: boolean;
  locked: boolean;
  /** Its URLs do not answer (the dashboard's "Apps not answering", a rule no check of ours covers); absent: they do. */
  notAnswering?: boolean;
}

/** A URL of an app, with its certificate and outside check. */
export interface UrlRec {
  id: number;
  url: string;
  appId: number;
  nsId: number;
  primary: boolean;
  state: string;
  /** `error` and `unknown` are kept as set; otherwise the status follows `sslExpiresAt` and the time. */
  sslFixed: Extract<SslStatus, 'error' | 'unknown'> | null;
  sslExpiresAt: number | null;
  publicCheck: 'passed' | 'failed' | null;
  publicCheckCode: string | null;
  publicCheckedAt: number | null;
  /**
   * The outside check stopped running for this URL: `publicCheckedAt` no longer moves. Otherwise a
   * URL with a verdict is checked again every {@link PUBLIC_CHECK_EVERY_MS} (the view says when last).
   */
  checkStopped?: boolean;
}

/** How often the simulated service checks a URL from outside (a URL with a verdict, whose check runs). */
export const PUBLIC_CHECK_EVERY_MS = 6 * 3_600_000;

/** An installer (`installers.list`). */
export interface InstallerRec {
  id: number;
  name: string;
  nsId: number;
  type: string;
  appId: number | null;
  state: string;
  serverId: number | null;
  url: string | null;
  platformLogin: boolean;
}

/** One off-site copy of a backup. */
export interface OffsiteRec {
  storage: string;
  type: string | null;
  onStorage: boolean;
  state: string | null;
  uploadedAt: number | null;
  error: string | null;
}

/** A backup of an app, with its verification and off-site copies. */
export interface BackupRec {
  id: number;
  appId: number;
  nsId: number;
  takenAt: number;
  format: 'zip' | 'dump';
  sizeMb: number;
  automated: boolean;
  state: string;
  verified: boolean;
  /** null: the usual single off-site copy, derived from the record (saves memory on big seeds). */
  offsite: OffsiteRec[] | null;
  /** Removed from the server before its time (`on_server` false however young). */
  offServer?: true;
}

/** A restore point: what a run changed on an app, and how it can be undone. */
export interface RestorePointRec {
  id: number;
  appId: number;
  nsId: number;
  at: number;
  action: string;
  outcome: 'running' | 'applied' | 'failed' | 'kept';
  runId: number | null;
  commits: { repository: string; before: string | null; after: string | null }[];
  modules: string[];
  backupId: number | null;
  rollbackOfId: number | null;
  held: boolean;
  instantUndo: boolean;
  keptUntil: number | null;
}

/** One step of a run; times are null until it starts. */
export interface StepRec {
  name: string;
  state: string;
  startedAt: number | null;
  updatedAt: number | null;
  reason: string | null;
  durationMs: number;
}

/** A run's watcher: it waits on the server, then reports `outcome`. */
export interface WatcherRec {
  state: WatcherState;
  progress: string | null;
  reason: string | null;
  startedAt: number;
  /** How long it waits before reporting `outcome`; null: it waits until a scenario says otherwise. */
  durationMs: number | null;
  outcome: Exclude<WatcherState, 'waiting'>;
  outcomeReason: string | null;
}

/** What a finished run does to the records it is about. */
export type RunEffect =
  | { kind: 'none' }
  | { kind: 'backup'; backupId: number }
  | { kind: 'maintenance'; on: boolean }
  | { kind: 'restart' }
  | { kind: 'deploy' }
  | { kind: 'update'; restorePointId: number | null };

/** A run (deploy, update, backup, patch…) of an app or a server, and how it will go on. */
export interface RunRec {
  id: number;
  appId: number | null;
  nsId: number;
  workflow: WorkflowName;
  action: string;
  record: string | null;
  recordType: string | null;
  createdAt: number;
  updatedAt: number;
  state: string;
  retrying: boolean;
  /** null for seeded history: derived from the run's id when read (see run-engine stepsOf). */
  steps: StepRec[] | null;
  /** Seeded history only: index of the failed step and why. */
  seedFailedStep: number | null;
  seedReason: string | null;
  watcher: WatcherRec | null;
  /** Step index at which the current attempt will fail, and why; null: it succeeds. */
  failAt: { step: number; reason: string; retrying?: boolean } | null;
  /** When a `retrying` run restarts its failed step by itself. */
  autoRetryAt: number | null;
  /**
   * The failures of its earlier attempts, kept when it is retried: a retry restarts the run from
   * its failed step, but the log of the attempt that failed stays (`log-tail.ts`). Absent: none.
   */
  pastFailures?: PastFailure[];
  /** The backup run this run waits for (apps.update / update_modules with backup). */
  backupRunId: number | null;
  /** The backup record this run makes (or its backup run makes). */
  backupId: number | null;
  effect: RunEffect;
}

/** An earlier attempt of a run that failed: its failed step (or watcher) and when, for its log. */
export interface PastFailure {
  /** When the failed step started (null: unknown, or a watcher's failure). */
  startedAt: number | null;
  /** When it failed. */
  at: number;
  /** The step's name, or null for a watcher's failure. */
  step: string | null;
  /** The step's reason, or the watcher's state and reason. */
  reason: string;
}

/** What a new run record must be given; everything else has a default (see {@link runRec}). */
export type RunRecFields = Pick<RunRec, 'id' | 'appId' | 'nsId' | 'workflow' | 'record' | 'recordType' | 'createdAt'> &
  Partial<Omit<RunRec, 'action'>>;

/**
 * A run record: the workflow's action, `updatedAt` = `createdAt`, done and not retrying, steps
 * derived from the id (`null`), no watcher, no failure planned, no effect — unless `fields` says
 * otherwise. The one place a RunRec is spelled out, for the seed, the engine and the control.
 */
export function runRec(fields: RunRecFields): RunRec {
  return {
    action: WORKFLOWS[fields.workflow].action,
    updatedAt: fields.createdAt,
    state: VOCABULARY.run.done,
    retrying: false,
    steps: null,
    seedFailedStep: null,
    seedReason: null,
    watcher: null,
    failAt: null,
    autoRetryAt: null,
    backupRunId: null,
    backupId: null,
    effect: { kind: 'none' },
    ...fields,
  };
}

/**
 * An open version upgrade of `app` in `upgradeState`, from its version to the next major one, with
 * no new app yet: for the seed and the control interface.
 */
export function upgradeRec(
  state: SimState,
  app: AppRec,
  upgradeState: string,
  purpose: UpgradeRec['purpose'] = 'test',
): UpgradeRec {
  const major = Number.parseInt(app.version, 10);
  return {
    id: state.nextId('upgrade'),
    fromVersion: app.version,
    toVersion: `${major + 1}.0`,
    purpose,
    state: upgradeState,
    sourceAppId: app.id,
    newAppId: null,
  };
}

/**
 * Stores a restore point of a change of `action` (default update) to `app` at `at`, still running:
 * its callers (a scenario's run, churn, `checks.restore_points.add`) settle it.
 */
export function addRestorePointRec(
  state: SimState,
  app: AppRec,
  at: number,
  action: 'update' | 'update_modules' = 'update',
  runId: number | null,
): RestorePointRec {
  const point: RestorePointRec = {
    id: state.nextId('restore_point'),
    appId: app.id,
    nsId: app.nsId,
    at,
    action,
    outcome: 'running',
    runId,
    commits:
      action === 'update'
        ? app.repositories.map((r) => ({ repository: r.repository, before: r.deployedSha, after: r.headSha }))
        : [],
    modules: action === 'update_modules' ? ['sale', 'stock'] : [],
    backupId: state.backupIndex.byApp(app.id)[0]?.id ?? null,
    rollbackOfId: null,
    held: false,
    instantUndo: false,
    keptUntil: null,
  };
  state.restorePoints.set(point.id, point);
  state.restorePointIndex.add(point);
  return point;
}

/** The whole simulated service. */
export class SimState {
  readonly namespaces = new Map<number, NamespaceRec>();
  readonly projects = new Map<number, ProjectRec>();
  readonly environments = new Map<number, EnvironmentRec>();
  readonly servers = new Map<number, ServerRec>();
  readonly apps = new Map<number, AppRec>();
  readonly urls = new Map<number, UrlRec>();
  readonly installers = new Map<number, InstallerRec>();
  readonly runs = new Map<number, RunRec>();
  readonly backups = new Map<number, BackupRec>();
  readonly restorePoints = new Map<number, RestorePointRec>();
  /** Runs newest first (created_at). */
  readonly runIndex = new NewestFirstIndex<RunRec>((r) => r.createdAt);
  /** Backups newest first (taken_at). */
  readonly backupIndex = new NewestFirstIndex<BackupRec>((b) => b.takenAt);
  /** Restore points newest first (at). */
  readonly restorePointIndex = new NewestFirstIndex<RestorePointRec>((p) => p.at);
  /** Runs whose state still moves with time: queued, running, or in error with an automatic retry due. */
  readonly activeRuns = new Set<number>();
  /** Every change answers writes_disabled while set. */
  writesDisabled = false;
  /** The time the seed was generated for. */
  seededAt = 0;
  private readonly nextIds = new Map<string, number>();

  /** A fresh id for a kind of record (ids grow; a new record's id is above every seeded one). */
  nextId(kind: string): number {
    const id = this.nextIds.get(kind) ?? 1;
    this.nextIds.set(kind, id + 1);
    return id;
  }

  /** The project of an app. */
  projectOf(app: AppRec): ProjectRec {
    return this.projects.get(app.projectId) as ProjectRec;
  }

  /** The namespace with this id. */
  namespace(id: number): NamespaceRec {
    return this.namespaces.get(id) as NamespaceRec;
  }
}
