/**
 * A check is one module: its name, the job whose snapshot it reads, the schema of its
 * `checks.<name>` section, the detector's options from that section, the detector, what it keeps
 * from a bulk read, and how its findings are shown. {@link defineCheck} binds them, checked by the
 * compiler, into one {@link Check}; one line of `registry.ts` adds it to the daemon.
 */
import type { z } from 'zod';
import type { BulkJob, BulkRecords, Snapshot, SnapshotJob } from '../collectors/snapshot.js';
import type { StateRecord } from '../collectors/state-word-tally.js';
import type { DetectorResult } from './detector-result.js';
import type { Detection, Finding } from './finding.js';
import { present, type Presentation } from './presentation.js';

/** The detectors' options by check name, as the registry hands them on; an absent check is disabled. */
export type OptionsByCheck = Readonly<Partial<Record<string, unknown>>>;

/** What a check module says about itself: the input of {@link defineCheck}. */
export interface CheckSpec<N extends string, J extends SnapshotJob, S extends z.ZodType, O, A> {
  /** The `checks.<name>` key of the config and the `check` label of its findings. */
  name: N;
  /** The job whose snapshot the detector reads. */
  job: J;
  /** The schema of `checks.<name>`, defaults included (`prefault({})`: the section may be left out). */
  config: S;
  /**
   * The detector's options from its own section and, where it shares words with another check, the
   * part of the `checks` section it reads (`A`); undefined: switched off, and the detector never runs.
   */
  options: (own: z.output<S>, checks: A) => O | undefined;
  /** The detector: pure, snapshot and options in, findings (and any part it could not see whole) out. */
  detect: (
    snapshot: Extract<Snapshot, { job: J }>,
    options: O,
    now: number,
  ) => Detection<N>[] | DetectorResult<Detection<N>>;
  /**
   * For a job that reads records in bulk ({@link BulkRecords}): whether the detector could find a
   * problem in this record, the test its collector keeps records by. Absent: it needs every record.
   */
  relevant?: J extends BulkJob ? (record: BulkRecords[J], options: O, now: number) => boolean : never;
  /** How its findings are shown. */
  presentation: Presentation;
  /**
   * The lists of `state` words in its section (`bad_states`, …), by the kind of record they judge:
   * a word the service says that no check's list names is warned about (the check would miss it).
   */
  stateLists?: (own: z.output<S>) => StateList[];
}

/** One list of `state` words of a check's section, and the kind of record whose state it judges. */
export interface StateList {
  record: StateRecord;
  /** The key in the check's section: `failed_states`. */
  field: string;
  words: readonly string[];
}

/** One check as the registry holds it: its parts, and the detector with its types erased to fit one list. */
export interface Check<N extends string = string, S extends z.ZodType = z.ZodType, O = unknown, A = unknown> {
  readonly name: N;
  readonly job: SnapshotJob;
  readonly config: S;
  readonly options: (own: z.output<S>, checks: A) => O | undefined;
  readonly presentation: Presentation;
  readonly stateLists?: ((own: z.output<S>) => StateList[]) | undefined;
  /** Its findings, presented; nothing when the snapshot is another job's or its check is disabled. */
  run(snapshot: Snapshot, options: OptionsByCheck, now: number): DetectorResult<Finding<N>>;
  /** For a check that declares one: its relevance test of a record of its job (false when it is off). */
  readonly relevant?: (record: unknown, options: OptionsByCheck, now: number) => boolean;
}

const NOTHING: DetectorResult<never> = { findings: [], incomplete: [] };

/** Binds a check's parts, checked by the compiler: the detector reads its job's snapshot with its options. */
export function defineCheck<N extends string, J extends SnapshotJob, S extends z.ZodType, O, A = unknown>(
  spec: CheckSpec<N, J, S, O, A>,
): Check<N, S, O, A> {
  const { name, job, detect, relevant, presentation } = spec;
  // Safe: the registry hands every check the options each one's `options` made, keyed by its name.
  const own = (options: OptionsByCheck) => options[name] as O | undefined;
  return {
    name,
    job,
    config: spec.config,
    options: spec.options,
    presentation,
    stateLists: spec.stateLists,
    ...(relevant && {
      relevant: (record: unknown, options: OptionsByCheck, now: number) => {
        const mine = own(options);
        // Safe: collectors pass records of `job`'s kind (`Relevance`).
        const test = relevant as (record: unknown, options: O, now: number) => boolean;
        return mine !== undefined && test(record, mine, now);
      },
    }),
    run(snapshot, options, now) {
      const mine = own(options);
      if (mine === undefined || snapshot.job !== job) return NOTHING;
      // Safe: `job` matched; TypeScript cannot narrow a union by a generic tag.
      const out = detect(snapshot as Extract<Snapshot, { job: J }>, mine, now);
      const { findings, incomplete } = Array.isArray(out) ? { findings: out, incomplete: [] } : out;
      return { findings: findings.map((d) => present(presentation, d)), incomplete };
    },
  };
}
