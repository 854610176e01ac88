import type { Detection, Finding } from './finding.js';

/**
 * What a detector reports about one snapshot: its findings, and the parts of the snapshot it could
 * NOT see whole. `incomplete` holds fingerprint prefixes (`attention/<rule>/` for a dashboard section
 * that lists 20 of 57 items): an open alert under such a prefix that is absent from `findings` may
 * simply not have been listed, so the lifecycle neither resolves nor drops it. A detector that sees
 * its whole snapshot returns plain findings (nothing incomplete). A detector returns its
 * {@link Detection}s; the registry hands on {@link Finding}s, presented by their check.
 */
export interface DetectorResult<F extends Detection<string> = Finding> {
  findings: F[];
  /** Fingerprint prefixes whose absence proves nothing this cycle; end them with `/`. */
  incomplete: string[];
}
