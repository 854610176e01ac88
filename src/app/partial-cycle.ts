/**
 * A read cut by a hard bound still announces what it saw. The bounds are far above any honest read
 * (`jobs.read_ceiling` in time, `api.max_list_items` in a list's items and so its pages,
 * `api.max_answer_size` in an answer's bytes): they are met by hostile answers, a list that never
 * ends. A collector that offered what it read so far (`collectors/read-so-far.ts`; the runs job
 * does) hands it back flagged partial; its findings are applied with every alert of the job's
 * checks held: a new problem fires, nothing absent resolves or is dropped, and an alert the read
 * did not reach says why ("not read: the read was cut short (…); held, not resolved"). The read still counts as
 * a failed one for the source's health ("cannot read" past the threshold).
 */
import { ApiError, ApiListTooLongError, ApiResponseError } from '../api/errors.js';
import type { ReadSoFar } from '../collectors/read-so-far.js';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Finding } from '../detectors/finding.js';
import { detectorsFor, runDetectors, type DetectorOptions } from '../detectors/registry.js';
import { ReadCeilingError } from './read-ceiling.js';
import type { HeldSubjects } from '../alerts/held-subjects.js';

/** What a cut read found: its findings, and what their absence proves nothing about (all of the job). */
export interface PartialFindings {
  findings: Finding[];
  incomplete: string[];
  /** Why the read was cut: the alerts it did not reach are held with it (`LifecycleInput.cut`). */
  cut: string;
  /** The records it set aside before the cut, whose alerts are held as in a complete read. */
  held?: HeldSubjects;
}

/**
 * The hard bound that cut a read, as the error to report: the ceiling (the reason the cycle's
 * signal was aborted with), a list past `api.max_list_items`, an answer past `api.max_answer_size`,
 * or the service's own rate limit past every retry (a 429 storm: what was read is still told).
 * Undefined for any other failure.
 */
export function boundThatCut(err: unknown, signal: AbortSignal | undefined): Error | undefined {
  if (signal?.reason instanceof ReadCeilingError) return signal.reason;
  if (err instanceof ApiListTooLongError || (err instanceof ApiError && err.status === 429)) return err;
  if (err instanceof ApiResponseError && err.problem === 'too_large') return err;
  return undefined;
}

/**
 * The findings of what the collector read before `cut`, with every fingerprint of the job's checks
 * held (`incomplete`: a prefix per check covers the whole check); undefined when it offered nothing.
 */
export function partialFindings(
  soFar: ReadSoFar,
  job: SnapshotJob,
  cut: Error,
  options: DetectorOptions,
  now: number,
): PartialFindings | undefined {
  const snapshot = soFar.take(cut.message);
  if (!snapshot) return undefined;
  const { findings, incomplete } = runDetectors(snapshot, options, now);
  return {
    findings,
    incomplete: [...incomplete, ...detectorsFor(job).map((c) => `${c.name}/`)],
    cut: `the read was cut short (${cut.message})`,
  };
}
