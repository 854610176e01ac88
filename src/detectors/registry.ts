/**
 * Every check, one line each ({@link CHECKS}), and what the rest of the daemon derives from them:
 * the check names, the detectors' options, the `checks.<name>` sections of the config schema, which
 * records a bulk read keeps, and how each check's findings are shown. Adding a check is one new
 * module (`defineCheck`, see `define-check.ts`) and one line here.
 *
 * A check runs only when its options are given: {@link detectorOptionsFromConfig} asks each check
 * for its options from `checks.*` of the config and leaves out the checks that are switched off;
 * the composition root also leaves out those the token lacks the permission for.
 *
 * A detector returns its findings, or a `DetectorResult` when it can tell that part of its snapshot
 * is not whole (a truncated attention section); the incomplete parts travel with the findings to the
 * lifecycle, which does not resolve what it could not see.
 *
 * A check of records read in bulk (URLs, apps in full, apps with their newest backup) also says
 * which records it could find a problem in ({@link relevanceFor}): its collector keeps only those,
 * so a cycle never holds the thousands of records that are fine.
 */
import type { z } from 'zod';
import type { BulkJob, BulkRecords, ExtraRead, Relevance, Snapshot, SnapshotJob } from '../collectors/snapshot.js';
import type { StateRecord } from '../collectors/state-word-tally.js';
import type { CheckName } from './check-name.js';
import type { ResolvedAlert, StateLists } from './define-check.js';
import { appStateCheck } from './app-state.js';
import { attentionCheck } from './attention.js';
import { backupsCheck } from './backups.js';
import { branchesCheck } from './branches.js';
import { certificatesCheck } from './certificates.js';
import type { DetectorResult } from './detector-result.js';
import { failedRunsCheck } from './failed-runs.js';
import type { Detection, Finding } from './finding.js';
import { installersCheck } from './installers.js';
import { maintenanceCheck } from './maintenance.js';
import { present, type Presentation } from './presentation.js';
import { repositoryChecksCheck } from './repository-checks.js';
import { restorePointsCheck } from './restore-points.js';
import type { RunContextAsk } from './run-context.js';
import { serversCheck } from './server-state.js';
import { stuckRunsCheck } from './stuck-runs.js';
import { upgradesCheck } from './upgrades.js';
import { urlChecksCheck } from './url-checks.js';
import { WATCHDOG, watchdogPresentation } from './watchdog.js';

/** Every check, in the order of the config's `checks` section. */
export const CHECKS = [
  failedRunsCheck,
  stuckRunsCheck,
  certificatesCheck,
  urlChecksCheck,
  backupsCheck,
  attentionCheck,
  maintenanceCheck,
  serversCheck,
  appStateCheck,
  branchesCheck,
  repositoryChecksCheck,
  upgradesCheck,
  restorePointsCheck,
  installersCheck,
] as const;

/** One of {@link CHECKS}. */
export type AnyCheck = (typeof CHECKS)[number];

/** A check that has a detector (every check but `watchdog`, which the daemon reports itself). */
export type DetectorCheck = AnyCheck['name'];

declare module './check-name.js' {
  /** The names of {@link CHECKS} and `watchdog`: what `CheckName` is, derived here. */
  interface RegisteredChecks {
    name: DetectorCheck | typeof WATCHDOG;
  }
}

export type { CheckName } from './check-name.js';

/** Every {@link CheckName}: the checks in registry order, then `watchdog`. */
export const CHECK_NAMES: readonly CheckName[] = [...CHECKS.map((c) => c.name), WATCHDOG];

/** Options of every check, keyed by check name; an absent check is disabled. */
export type DetectorOptions = { [C in AnyCheck as C['name']]?: NonNullable<ReturnType<C['options']>> };

/** The schema of each check's `checks.<name>` section, keyed by name, in registry order. */
export const CHECK_CONFIGS = Object.fromEntries(CHECKS.map((c) => [c.name, c.config])) as {
  [C in AnyCheck as C['name']]: C['config'];
};

/** Each check's `checks.<name>` section as parsed, keyed by name. */
export type ChecksConfig = { [C in AnyCheck as C['name']]: z.output<C['config']> };

/** What one check's `options` reads of the whole `checks` section besides its own section. */
type ReadsOf<C> = C extends { options: (own: never, checks: infer A) => unknown } ? A : never;

/**
 * What every check's `options` reads of the whole section (failed_runs: stuck_runs' words), all of
 * it at once: taken check by check, so one that reads nothing (`unknown`) does not swallow the rest.
 */
type OptionsReads = (
  AnyCheck extends infer C ? (C extends unknown ? (reads: ReadsOf<C>) => void : never) : never
) extends (reads: infer I) => void
  ? I
  : never;

/**
 * Asks every check for its detector's options from `checks.*` of the config: state words, durations
 * in ms. A check switched off (`enabled: false`) is left out, which is how the registry knows not to
 * run it. Pure: the same config always gives the same options.
 */
export function detectorOptionsFromConfig(checks: ChecksConfig): DetectorOptions {
  // Checked here by the compiler: the section holds what any check reads of another's.
  const reads: OptionsReads = checks;
  const out: Partial<Record<DetectorCheck, unknown>> = {};
  for (const check of CHECKS) {
    // Safe: `checks[check.name]` is the section of `check`; TypeScript cannot correlate the two.
    const read = check.options as (own: unknown, checks: OptionsReads) => unknown;
    const options = read(checks[check.name], reads);
    if (options !== undefined) out[check.name] = options;
  }
  return out as DetectorOptions;
}

/** A list of `state` words of the config, named by its key (`checks.failed_runs.failed_states`). */
export interface NamedStateList {
  key: string;
  words: readonly string[];
}

/**
 * Every list of `state` words the `checks` section holds, by the kind of record it judges, whether
 * or not its check is enabled: a word in one of them is known to the daemon (the lists have
 * defaults, and a check switched off still says what its words mean).
 */
export function stateListsFromConfig(checks: ChecksConfig): Map<StateRecord, NamedStateList[]> {
  const out = new Map<StateRecord, NamedStateList[]>();
  for (const check of CHECKS) {
    const lists = check.stateLists as StateLists | undefined;
    if (!lists) continue;
    // Safe: `checks[check.name]` is the section of `check`, and each field one of its word lists.
    const section = checks[check.name] as unknown as Record<string, readonly string[]>;
    const named = out.get(lists.record) ?? [];
    for (const field of lists.fields) named.push({ key: `checks.${check.name}.${field}`, words: section[field]! });
    out.set(lists.record, named);
  }
  return out;
}

/** The checks by name, for what is asked of one alert's check. */
const BY_NAME: ReadonlyMap<string, AnyCheck> = new Map<string, AnyCheck>(CHECKS.map((c) => [c.name, c]));

/**
 * Why an open alert that `snapshot` resolves is over, asked of the alert's check: its
 * `resolution`, read in the same snapshot and options; null when the check cannot tell (or reads
 * another job's snapshot).
 */
export function explainerFor(
  snapshot: Snapshot,
  options: DetectorOptions,
): (alert: ResolvedAlert & { check: string }) => string | null {
  return (alert) => BY_NAME.get(alert.check)?.explain(alert, snapshot, options) ?? null;
}

/**
 * The run the API can say more about for an alert (its log, its restore point), asked of the
 * alert's check (`context` in its module); null when the check asks nothing or the alert does not say.
 */
export function contextAskOf(alert: ResolvedAlert & { check: string }): RunContextAsk | null {
  return BY_NAME.get(alert.check)?.contextAsk(alert) ?? null;
}

/**
 * The checks that run: enabled (they have options) and their job runs (`runs(job)`: scheduled,
 * not switched off for a missing permission). What the attention check asks before it waits for
 * one of them to report an item.
 */
export function reportingChecks(options: DetectorOptions, runs: (job: SnapshotJob) => boolean): string[] {
  return CHECKS.filter((c) => options[c.name] !== undefined && runs(c.job)).map((c) => c.name);
}

/** The checks that read `job`'s snapshot (whether or not they are enabled). */
export function detectorsFor(job: SnapshotJob): readonly AnyCheck[] {
  return CHECKS.filter((c) => c.job === job);
}

/**
 * Runs every enabled detector of the snapshot's job; pure, like the detectors themselves. Answers
 * all their findings, each presented by its check, and every part of the snapshot one of them
 * declared incomplete, and what they folded into other alerts.
 */
export function runDetectors(snapshot: Snapshot, options: DetectorOptions, now: number): DetectorResult {
  const results: DetectorResult[] = detectorsFor(snapshot.job).map((c) => c.run(snapshot, options, now));
  const folded = results.flatMap((r) => r.folded ?? []);
  return {
    findings: results.flatMap((r) => r.findings),
    incomplete: results.flatMap((r) => r.incomplete),
    ...(folded.length > 0 ? { folded } : {}),
  };
}

/** What the collectors read beyond their jobs' own reads for the enabled checks (each check's `reads`). */
export function extraReadsFor(options: DetectorOptions): ReadonlySet<ExtraRead> {
  return new Set(CHECKS.filter((c) => options[c.name] !== undefined).flatMap((c) => c.reads));
}

/** The jobs one of whose checks declares which records of a bulk read it could find a problem in. */
const BULK_JOBS: readonly SnapshotJob[] = [...new Set(CHECKS.filter((c) => c.relevant).map((c) => c.job))];

/** The subject id of a record of each bulk read: what an open alert about it names. */
const BULK_SUBJECTS: { readonly [J in BulkJob]: (record: BulkRecords[J]) => string[] } = {
  urls: (url) => [subjectKey('url', url.id)],
  maintenance: ({ app }) => [subjectKey('app', app.id)],
  // An app's backup alerts are about the app, or about one of the backups read of it.
  backups: ({ app, seen }) => [
    subjectKey('app', app.id),
    ...[seen?.newest, seen?.finished, seen?.good, ...(seen?.previous ?? [])].flatMap((b) =>
      b ? [subjectKey('backup', b.id)] : [],
    ),
  ],
};

/** An open alert's subject as {@link relevanceFor} matches it: its type and id ("backup:77"). */
export function subjectKey(type: string, id: number): string {
  return `${type}:${id}`;
}

/**
 * The records of bulk reads that an enabled check could find a problem in, at `now` (the time the
 * detectors will judge the snapshot by), for every job whose checks declare such a test. A check of
 * such a job that declares no test keeps every record of its job. The records open alerts are about
 * (`openSubjects`, by {@link subjectKey}) are kept too, so the check that resolves one can say why
 * it is over: an app whose alert is about one of its backups, too.
 */
export function relevanceFor(
  options: DetectorOptions,
  now: number,
  openSubjects: ReadonlySet<string> = new Set(),
): Relevance {
  const out: Partial<Record<SnapshotJob, (record: unknown) => boolean>> = {};
  for (const job of BULK_JOBS) {
    const enabled = detectorsFor(job).filter((c) => options[c.name] !== undefined);
    // Safe: each job's collector hands its test records of that job's kind.
    const keysOf = BULK_SUBJECTS[job as BulkJob] as (record: unknown) => string[];
    out[job] = enabled.some((c) => !c.relevant)
      ? () => true
      : (record) =>
          keysOf(record).some((key) => openSubjects.has(key)) || enabled.some((c) => c.relevant!(record, options, now));
  }
  // Safe: each test is handed records of its job's kind by that job's collector.
  return out as Relevance;
}

/** How a check's findings are shown, by its name (a `check` label); undefined for a name no check has. */
export function presentationOf(check: string): Presentation | undefined {
  return check === WATCHDOG ? watchdogPresentation : BY_NAME.get(check)?.presentation;
}

/**
 * A detection with what its check shows of it: for findings made outside a detector (the
 * watchdog's own), or by a detector called directly; `runDetectors` presents its own.
 */
export function presented<C extends CheckName>(detection: Detection<C>): Finding<C> {
  return present(presentationOf(detection.check)!, detection);
}
