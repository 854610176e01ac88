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
 */
import type { Snapshot, SnapshotJob } from '../collectors/snapshot.js';
import { attention, type AttentionOptions } from './attention.js';
import { backups, type BackupsOptions } from './backups.js';
import { certificates, type CertificatesOptions } from './certificates.js';
import type { DetectorResult } from './detector-result.js';
import { failedRuns, type FailedRunsOptions } from './failed-runs.js';
import type { CheckName, Finding } from './finding.js';
import { maintenance, type MaintenanceOptions } from './maintenance.js';
import { serverState, type ServerStateOptions } from './server-state.js';
import { stuckRuns, type StuckRunsOptions } from './stuck-runs.js';
import { urlChecks, type UrlChecksOptions } from './url-checks.js';

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
}

const NOTHING: DetectorResult = { findings: [], incomplete: [] };

export type { DetectorResult } from './detector-result.js';

/** Binds a detector to its job and its options key, checked by the compiler. */
function define<J extends SnapshotJob, C extends DetectorCheck>(
  job: J,
  check: C,
  detect: (
    snapshot: Extract<Snapshot, { job: J }>,
    options: NonNullable<DetectorOptions[C]>,
    now: number,
  ) => Finding[] | DetectorResult,
): RegisteredDetector {
  return {
    check,
    job,
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
  define('urls', 'certificates', certificates),
  define('urls', 'url_checks', urlChecks),
  define('backups', 'backups', backups),
  define('attention', 'attention', attention),
  define('maintenance', 'maintenance', maintenance),
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
