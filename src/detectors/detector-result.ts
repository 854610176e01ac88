import type { Detection, Finding } from './finding.js';

/**
 * What a detector reports about one snapshot: its findings, and the parts of the snapshot it could
 * NOT see whole. `incomplete` holds fingerprint prefixes (`attention/<rule>/` for a dashboard section
 * that lists 20 of 57 items) or whole fingerprints: an open alert they cover that is absent from
 * `findings` may simply not have been listed, so the lifecycle neither resolves nor drops it. A
 * detector that sees its whole snapshot returns plain findings (nothing incomplete). A detector
 * returns its {@link Detection}s; the registry hands on {@link Finding}s, presented by their check.
 */
export interface DetectorResult<F extends Detection<string> = Finding> {
  findings: F[];
  /**
   * What proves nothing by its absence this cycle: prefixes, ending with `/`, or whole
   * fingerprints (which cover only themselves).
   */
  incomplete: string[];
  /**
   * Problems the detector saw and left out on purpose, each with its named reason: an attention
   * item folded into the alert of ours that reports the same record. For the cycle's log; absent:
   * none. Each is also in `incomplete`, so an alert it had opened before stays as it is.
   */
  folded?: FoldedFinding[];
}

/** A problem left out because another alert already reports it. */
export interface FoldedFinding {
  /** The fingerprint it would have had. */
  fingerprint: string;
  /** Why, named: "reported by failed_runs (run 123)". */
  reason: string;
  /**
   * The alert it was folded into, named ("failed_runs (run 123)"): an alert of its own, opened
   * before, closes quietly saying so (see `LifecycleInput.folded`).
   */
  into?: string;
}
