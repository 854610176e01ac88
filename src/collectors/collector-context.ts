/**
 * What every collector is handed for one read of its source. Built per cycle by the job runner,
 * so a collector holds nothing between cycles and reads the same way in `run` and in `check`.
 */
import type { ApiClient } from '../api/client.js';
import type { RunListItem } from '../api/schemas.js';
import type { Logger } from '../lib/logger.js';
import type { Config } from '../config/load-config.js';
import type { OpenSubject } from '../lib/alert-vocabulary.js';
import type { ReadSoFar } from './read-so-far.js';
import type { RunsMemory } from './runs-memory.js';
import type { SharedApps } from './shared-apps.js';
import type { ExtraRead, Relevance } from './snapshot.js';
import type { QuarantineSink } from '../api/quarantine.js';

/** The inputs of one collection. */
export interface CollectorContext {
  client: ApiClient;
  /**
   * Namespace codes to read, one list call each, merged; `null` reads without the `namespace`
   * parameter (every namespace the token reaches, in one walk).
   */
  namespaces: readonly string[] | null;
  /**
   * The namespace codes the token reaches, as the runtime's one `whoami` said; null or absent when
   * whoami could not tell (refused): nothing to widen a capped attention section with.
   */
  reached?: readonly string[] | null;
  /** `config.checks`: state words, look-back and which checks are on. */
  checks: Config['checks'];
  /** When the read starts (ms since the epoch, from the injected clock). */
  now: number;
  /** Aborts every request of the read (shutdown past its deadline). */
  signal?: AbortSignal;
  /** Requests in flight at once for per-record reads (`api.concurrency`). */
  concurrency: number;
  /**
   * The subjects of this job's open (pending and firing) alerts, with their details, from the
   * alert state. A collector whose source it lists only in part (runs, within a look-back) reads
   * these records by id, so an alert is decided by its record and never resolved by the record
   * leaving the window; the runs collector also hands failed_runs what its alerts last said
   * (`RunsSnapshot.openFailures`). Absent: none open.
   */
  openSubjects?: readonly OpenSubject[];
  /**
   * What the open (pending and firing) alerts of every other job are about, read from the alert
   * state when called: the attention and maintenance collectors ask, after their read, so their
   * checks can fold what the daemon's own checks already report (a dashboard item, a failed
   * upgrade's failed run) into those alerts. Absent: none.
   */
  reportedElsewhere?: () => readonly OpenSubject[];
  /**
   * The checks of ours that run now (enabled, their job scheduled and not switched off for a
   * missing permission): an attention item no one of them could report is news at once. Absent:
   * every check counts.
   */
  reporting?: readonly string[];
  /**
   * Which records of a bulk read an enabled check could find a problem in (`relevanceFor` of the
   * detector registry); a collector keeps only those, page by page. Absent: keep every record.
   */
  relevance?: Relevance;
  /** The reads beyond the job's own that an enabled check asks for (`reads` of its module); absent: none. */
  extraReads?: ReadonlySet<ExtraRead>;
  /**
   * Where the records the read cannot take are set aside (`api/quarantine.ts`): a record a read by
   * id refuses, or one whose timestamp, type or value cannot be read. The rest of the read goes
   * on, complete for every other record; the job cycle holds the set-aside records' alerts. Every
   * list walk and read by id of a collector hands it on. Absent: such a record fails the read.
   */
  quarantine?: QuarantineSink;
  /**
   * Where a collector offers what it has read so far, for a read a hard bound cuts (the runs
   * collector does); absent, or not offered: a cut read is a failed read, as any other.
   */
  soFar?: ReadSoFar;
  /**
   * What the runs collector remembers between cycles (`runs-memory.ts`), owned by the runtime;
   * absent (`check` in tests, a bare call): every cycle reads the whole look-back window.
   */
  runsMemory?: RunsMemory;
  /** The `apps.list` every job of a cycle window shares (`shared-apps.ts`); absent: each reads its own. */
  sharedApps?: SharedApps;
  /**
   * Whether a remediation policy waits on this failed run's detail (it matches on the failed step's
   * `reason` or `step`, `remediation/run-detail-wanted.ts`): the runs collector reads such runs by
   * id first, past its usual bound. Absent: no policy waits on any.
   */
  detailWanted?: (run: RunListItem) => boolean;
  /**
   * Clock time past which the runs collector reads no more runs by id for their details (steps,
   * reason, watcher), asked as those reads begin: then plus `api.timeout`. Absent: no bound.
   */
  detailsBy?: () => number;
  logger: Logger;
}
