/**
 * Which detectors read which job's snapshot, one line each, and running them.
 *
 * A check runs only when its options are given: the composition root maps `checks.*` of the config
 * onto `DetectorOptions` and leaves out the checks that are disabled (or that the token lacks the
 * permission for). Adding a check is one new file and one `define(…)` line here.
 *
 * A detector returns its findings, or a {@link DetectorResult} when it can tell that part of its
 * snapshot is not whole (a truncated attention section); the incomplete parts travel with the
 * findings to the lifecycle, which does not resolve what it could not see.
 *
 * A detector of records read in bulk (URLs, apps in full, apps with their newest backup) also says
 * which records it could find a problem in ({@link relevanceFor}): its collector keeps only those,
 * so a cycle never holds the thousands of records that are fine.
 */
import type { UrlRecord } from '../api/schemas.js';
import type { Snapshot, SnapshotJob } from '../collectors/snapshot.js';
import type { MaintenanceApp } from '../collectors/views.js';
import { attention, type AttentionOptions } from './attention.js';
import { backups, backupsConcern, type AppBackups, type BackupsOptions } from './backups.js';
import { certificateConcerns, certificates, type CertificatesOptions } from './certificates.js';
import type { DetectorResult } from './detector-result.js';
import { failedRuns, type FailedRunsOptions } from './failed-runs.js';
import type { CheckName, Finding } from './finding.js';
import { inMaintenance, maintenance, type MaintenanceOptions } from './maintenance.js';
import { serverState, type ServerStateOptions } from './server-state.js';
import { stuckRuns, type StuckRunsOptions } from './stuck-runs.js';
import { urlCheckFailed, urlChecks, type UrlChecksOptions } from './url-checks.js';

/** Options of every check, keyed by check name; an absent check is disabled. */
export interface DetectorOptions {
  failed_runs?: FailedRunsOptions;
  stuck_runs?: StuckRunsOptions;
  certificates?: CertificatesOptions;
  url_checks?: UrlChecksOptions;
  backups?: BackupsOptions;
  attention?: AttentionOptions;
  maintenance?: MaintenanceOptions;
  servers?: ServerStateOptions;
}

/** A check that has a detector (every check but `watchdog`, which the daemon reports itself). */
export type DetectorCheck = keyof DetectorOptions;

/** One registered detector, with its types erased so detectors of every job fit in one list. */
export interface RegisteredDetector {
  check: DetectorCheck & CheckName;
  /** The job whose snapshot it reads. */
  job: SnapshotJob;
  /** Its result; nothing found when the snapshot is another job's or its check is disabled. */
  run(snapshot: Snapshot, options: DetectorOptions, now: number): DetectorResult;
  /**
   * For a detector of a job that reads records in bulk ({@link BulkRecords}): whether it could find
   * a problem in this record (false when its check is off). The record is of the job's kind.
   */
  relevant?(record: unknown, options: DetectorOptions, now: number): boolean;
}

/** The records a job reads in bulk, by job: the ones its detectors declare relevant or not. */
export interface BulkRecords {
  /** A `urls.list` record. */
  urls: UrlRecord;
  /** An `apps.get` answer, as the maintenance job keeps it. */
  maintenance: MaintenanceApp;
  /** An app of `apps.list` with its newest backup. */
  backups: AppBackups;
}

/**
 * Whether an enabled check could find a problem in a record, per job that reads records in bulk.
 * Collectors keep only such records: one left out is one no detector would report, exactly as if
 * it had been read and judged fine.
 */
export type Relevance = { readonly [J in keyof BulkRecords]: (record: BulkRecords[J]) => boolean };

const NOTHING: DetectorResult = { findings: [], incomplete: [] };

/** Binds a detector to its job and its options key, checked by the compiler. */
function define<J extends SnapshotJob, C extends DetectorCheck>(
  job: J,
  check: C,
  detect: (
    snapshot: Extract<Snapshot, { job: J }>,
    options: NonNullable<DetectorOptions[C]>,
    now: number,
  ) => Finding[] | DetectorResult,
  relevant?: J extends keyof BulkRecords
    ? (record: BulkRecords[J], options: NonNullable<DetectorOptions[C]>, now: number) => boolean
    : never,
): RegisteredDetector {
  return {
    check,
    job,
    ...(relevant && {
      relevant: (record: unknown, options: DetectorOptions, now: number) => {
        const own = options[check];
        // Safe as in `run`: the options of `check`, and (collectors pass them) a record of `job`'s kind.
        const test = relevant as (record: unknown, options: NonNullable<DetectorOptions[C]>, now: number) => boolean;
        return own !== undefined && test(record, own as NonNullable<DetectorOptions[C]>, now);
      },
    }),
    run(snapshot, options, now) {
      const own = options[check];
      if (own === undefined || snapshot.job !== job) return NOTHING;
      // Safe: `job` matched, and `own` is the options of `check`; TypeScript cannot correlate them.
      const out = detect(snapshot as Extract<Snapshot, { job: J }>, own as NonNullable<DetectorOptions[C]>, now);
      return Array.isArray(out) ? { findings: out, incomplete: [] } : out;
    },
  };
}

/** Every detector. */
const DETECTORS: readonly RegisteredDetector[] = [
  define('runs', 'failed_runs', failedRuns),
  define('runs', 'stuck_runs', stuckRuns),
  define('urls', 'certificates', certificates, certificateConcerns),
  define('urls', 'url_checks', urlChecks, urlCheckFailed),
  define('backups', 'backups', backups, backupsConcern),
  define('attention', 'attention', attention),
  define('maintenance', 'maintenance', maintenance, inMaintenance),
  define('servers', 'servers', serverState),
];

/** The detectors that read `job`'s snapshot (whether or not their check is enabled). */
export function detectorsFor(job: SnapshotJob): readonly RegisteredDetector[] {
  return DETECTORS.filter((d) => d.job === job);
}

/**
 * Runs every enabled detector of the snapshot's job; pure, like the detectors themselves. Answers
 * all their findings and every part of the snapshot one of them declared incomplete.
 */
export function runDetectors(snapshot: Snapshot, options: DetectorOptions, now: number): DetectorResult {
  const results = detectorsFor(snapshot.job).map((d) => d.run(snapshot, options, now));
  return { findings: results.flatMap((r) => r.findings), incomplete: results.flatMap((r) => r.incomplete) };
}

/**
 * The records of bulk reads that an enabled check could find a problem in, at `now` (the time the
 * detectors will judge the snapshot by). A detector of such a job that declares no test keeps
 * every record of its job.
 */
export function relevanceFor(options: DetectorOptions, now: number): Relevance {
  const test = <J extends keyof BulkRecords>(job: J): ((record: BulkRecords[J]) => boolean) => {
    const enabled = detectorsFor(job).filter((d) => options[d.check] !== undefined);
    if (enabled.some((d) => !d.relevant)) return () => true;
    return (record) => enabled.some((d) => d.relevant!(record, options, now));
  };
  return { urls: test('urls'), maintenance: test('maintenance'), backups: test('backups') };
}
