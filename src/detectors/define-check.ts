/**
 * A check is one module: its name, the job whose snapshot it reads, the schema of its
 * `checks.<name>` section, the detector's options from that section, the detector, what it keeps
 * from a bulk read, and how its findings are shown. {@link defineCheck} binds them, checked by the
 * compiler, into one {@link Check}; one line of `registry.ts` adds it to the daemon. What every
 * check's section takes whatever the check (`runbook_url`) is added here, once.
 */
import { z } from 'zod';
import { runbookUrlSchema } from '../config/link-schema.js';
import type { BulkJob, BulkRecords, ExtraRead, Snapshot, SnapshotJob } from '../collectors/snapshot.js';
import type { StateRecord } from '../collectors/state-word-tally.js';
import type { Subject } from '../lib/alert-vocabulary.js';
import type { DetectorResult } from './detector-result.js';
import type { Detection, Finding } from './finding.js';
import { present, type Presentation } from './presentation.js';
import type { RunContextAsk } from './run-context.js';

/** The detectors' options by check name, as the registry hands them on; an absent check is disabled. */
export type OptionsByCheck = Readonly<Partial<Record<string, unknown>>>;

/** What a check module says about itself: the input of {@link defineCheck}. */
export interface CheckSpec<N extends string, J extends SnapshotJob, S extends z.ZodType, O, A> {
  /** The `checks.<name>` key of the config and the `check` label of its findings. */
  name: N;
  /** The job whose snapshot the detector reads. */
  job: J;
  /** The schema of `checks.<name>`, defaults included, behind `prefault({})` (the section may be left out). */
  config: S;
  /**
   * The detector's options from its own section and, where it shares words with another check, the
   * part of the `checks` section it reads (`A`); undefined: switched off, and the detector never runs.
   * Left out (most checks): the section as parsed, unless switched off ({@link whenEnabled}).
   */
  options?: (own: z.output<S>, checks: A) => O | undefined;
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
  /** What its job's collector reads for it beyond the job's own reads, while it is enabled. */
  reads?: readonly ExtraRead[];
  /** How its findings are shown. */
  presentation: Presentation;
  /**
   * The lists of `state` words in its section (`bad_states`, …) and the kind of record they judge:
   * a word the service says that no check's list names is warned about (the check would miss it).
   */
  stateLists?: StateLists<z.output<S>>;
  /**
   * Why an open alert of this check that the snapshot resolves is over, read in that snapshot
   * ("run #5981 succeeded", "certificate renewed: valid until …"); null when it cannot tell. Pure.
   * The records of open alerts are kept by bulk reads (see `relevanceFor`), so they are there to read.
   */
  resolution?: (alert: ResolvedAlert, snapshot: Extract<Snapshot, { job: J }>, options: O) => string | null;
  /**
   * What the API can tell about a new alert of this check beyond its snapshot (the log around a
   * failed run, its restore point): the run to ask about, read after the cycle (`src/context/`),
   * or null. Pure, from what the alert carries. Absent: its alerts get no context.
   */
  context?: (alert: ResolvedAlert) => RunContextAsk | null;
}

/** What a check reads of an alert it is asked to explain the end of: its finding's labels and details, its subject. */
export type ResolvedAlert = Pick<Detection<string>, 'labels' | 'details'> & { subject: Subject | null };

/** Which keys of a check's section list `state` words, and the kind of record whose state they judge. */
export interface StateLists<C = Record<string, unknown>> {
  /** The kind of record whose `state` they judge. */
  record: StateRecord;
  /** Their keys in the check's section, each a list of words: `failed_states`. */
  fields: readonly { [K in keyof C]: C[K] extends readonly string[] ? K : never }[keyof C][];
}

/**
 * The keys every check's section takes besides its own: `runbook_url`, where a reader of the
 * check's alerts finds what to do, linked in every message about them.
 */
type CommonKeys = { runbook_url: z.ZodOptional<typeof runbookUrlSchema> };

/**
 * A check's section schema with the keys every check takes ({@link CommonKeys}): the same
 * object behind the same `prefault`, so the config's `checks` section still knows a left-out
 * section is optional.
 */
export type CheckConfigSchema<S extends z.ZodType> =
  S extends z.ZodPrefault<z.ZodObject<infer Shape, infer Config>>
    ? z.ZodPrefault<z.ZodObject<Shape & CommonKeys, Config>>
    : never;

/** One check as the registry holds it: its parts, and the detector with its types erased to fit one list. */
export interface Check<N extends string = string, S extends z.ZodType = z.ZodType, O = unknown, A = unknown> {
  readonly name: N;
  readonly job: SnapshotJob;
  /** The schema of `checks.<name>`: the check's own, with `runbook_url` added. */
  readonly config: CheckConfigSchema<S>;
  readonly options: (own: z.output<S>, checks: A) => O | undefined;
  readonly presentation: Presentation;
  readonly stateLists?: StateLists<z.output<S>> | undefined;
  /** The run the API can say more about for an alert of this check (see `CheckSpec.context`); null: none. */
  contextAsk(alert: ResolvedAlert): RunContextAsk | null;
  /** Why an alert of this check is over, read in the snapshot that resolved it; null: cannot tell. */
  explain(alert: ResolvedAlert, snapshot: Snapshot, options: OptionsByCheck): string | null;
  /** Its findings, presented; nothing when the snapshot is another job's or its check is disabled. */
  run(snapshot: Snapshot, options: OptionsByCheck, now: number): DetectorResult<Finding<N>>;
  /** For a check that declares one: its relevance test of a record of its job (false when it is off). */
  readonly relevant?: (record: unknown, options: OptionsByCheck, now: number) => boolean;
  /** What its job's collector reads for it beyond the job's own (see `CheckSpec.reads`). */
  readonly reads: readonly ExtraRead[];
}

const NOTHING: DetectorResult<never> = { findings: [], incomplete: [] };

/** The `options` of a check whose detector reads its section as parsed: the section, unless switched off. */
const whenEnabled = <C extends { enabled: boolean }>(own: C): C | undefined => (own.enabled ? own : undefined);

/**
 * The check's own section schema with `runbook_url` added: an object schema (strict, with its
 * refinements kept) behind `prefault({})` (the section may be left out), as every check writes it.
 * Thrown at load otherwise, naming the check: a new check is written the same way.
 */
function withCommonKeys<S extends z.ZodType>(name: string, schema: S): CheckConfigSchema<S> {
  const inner = schema instanceof z.ZodPrefault ? schema.unwrap() : undefined;
  if (!(inner instanceof z.ZodObject)) {
    throw new TypeError(`check ${name}: its config must be a z.object(…).prefault({})`);
  }
  // Safe: the same object with one optional key more, behind the same prefault.
  return inner.safeExtend({ runbook_url: runbookUrlSchema.optional() }).prefault({}) as unknown as CheckConfigSchema<S>;
}

/**
 * Binds a check's parts, checked by the compiler: the detector reads its job's snapshot with its
 * options, without `options` its section as parsed (which has `enabled`).
 */
export function defineCheck<N extends string, J extends SnapshotJob, S extends z.ZodType<{ enabled: boolean }>>(
  spec: Omit<CheckSpec<N, J, S, z.output<S>, unknown>, 'options'>,
): Check<N, S, z.output<S>, unknown>;
export function defineCheck<N extends string, J extends SnapshotJob, S extends z.ZodType, O, A = unknown>(
  spec: CheckSpec<N, J, S, O, A> & Required<Pick<CheckSpec<N, J, S, O, A>, 'options'>>,
): Check<N, S, O, A>;
export function defineCheck<N extends string, J extends SnapshotJob, S extends z.ZodType, O, A = unknown>(
  spec: CheckSpec<N, J, S, O, A>,
): Check<N, S, O, A> {
  const { name, job, detect, relevant, presentation } = spec;
  // Safe: the registry hands every check the options each one's `options` made, keyed by its name.
  const own = (options: OptionsByCheck) => options[name] as O | undefined;
  return {
    name,
    job,
    config: withCommonKeys(name, spec.config),
    // Safe: without `options`, the first overload made `O` the section as parsed, which has `enabled`.
    options: spec.options ?? (whenEnabled as (own: z.output<S>) => O | undefined),
    presentation,
    stateLists: spec.stateLists,
    reads: spec.reads ?? [],
    contextAsk: (alert) => spec.context?.(alert) ?? null,
    explain(alert, snapshot, options) {
      const mine = own(options);
      if (!spec.resolution || mine === undefined || snapshot.job !== job) return null;
      // Safe: `job` matched, as in `run`.
      return spec.resolution(alert, snapshot as Extract<Snapshot, { job: J }>, mine);
    },
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
      const result: DetectorResult<Detection<N>> = Array.isArray(out) ? { findings: out, incomplete: [] } : out;
      return { ...result, findings: result.findings.map((d) => present(presentation, d)) };
    },
  };
}
