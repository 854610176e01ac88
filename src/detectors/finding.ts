/**
 * What a detector reports: one problem, with a fingerprint that stays the same for as long as the
 * problem lasts, so the alert lifecycle can tell "new", "still there" and "gone".
 */
import type { Fact, Labels, Severity, Subject } from '../lib/alert-vocabulary.js';
import type { CheckName } from './check-name.js';
import { formatDuration } from '../lib/format-duration.js';

/**
 * One problem as a detector sees it, before its check's presentation adds what a reader is shown
 * ({@link Finding}). `C` is the check: a detector names its own, so its type does not depend on the
 * registry that lists it.
 */
export interface Detection<C extends string = CheckName> {
  /** Stable for the life of the problem, e.g. `failed_runs/run/123`. */
  fingerprint: string;
  check: C;
  severity: Severity;
  /** One line a person understands without context: "Update of shop (staging) failed at step install". */
  summary: string;
  /** Everything known about the problem: { run: '#123', step: 'install', reason: '…' }. */
  details: Record<string, string>;
  labels: Labels<C>;
  /** Link to the app (its URL) where known. */
  url?: string | null;
  /** When the problem began according to the source (ISO 8601), where the source says. */
  since?: string | null;
  subject?: Subject;
  /**
   * Fire only once the finding has been seen continuously this long, measured by the lifecycle from
   * first sighting. For problems whose start the source does not say (an app left in maintenance):
   * the detector cannot tell "just now" from "for hours", so it reports at once and lets the
   * lifecycle hold the alert back. Absent: fire at once.
   */
  holdForMs?: number;
  /**
   * The problem may be ending: its record is being worked on again (a failed run retried from its
   * failed step). An alert already firing stays open and says so (its summary) without a word to
   * anyone, not even a repeat; one not firing yet keeps waiting and does not fire on this sighting.
   * Since when it says in its details, under {@link UNDERWAY_SINCE}.
   */
  underway?: boolean;
  /**
   * Why this sighting is news though its severity did not rise: a firing alert escalates on it (a
   * person who acknowledged it hears again). The detector sets it on the one sighting that is news,
   * comparing with what the open alert last said, so the alert escalates once, not every cycle.
   */
  escalation?: EscalationReason;
  /**
   * What the hold waits for, as a person reads it ("waiting up to 20m (checks.attention.fold_wait)
   * for failed_runs to report run 123"): kept with the pending alert, so `alerts` and the console
   * say why it is not told yet. Absent: the check's wait, unnamed.
   */
  holdReason?: string;
}

/**
 * The detail an `underway` finding says since when its record is worked on again under (ISO 8601:
 * a retry's start). A firing alert whose value of it is new has begun a new spell of work: the
 * channels that keep a message per alert say so there (`CommittedCycle.underway`), once per spell.
 */
export const UNDERWAY_SINCE = 'retry_since';

/**
 * The detail a finding that says more than its problem (a retry running) keeps the problem alone
 * in: its alert's summary once resolved, when the retry is over and the failure is what it was.
 * Never sent (`shownDetails`).
 */
export const RESOLVED_SUMMARY = 'resolved_summary';

/** Why a finding escalates its firing alert without a rise in severity. */
export type EscalationReason = 'retry failed';

/**
 * One problem found in one complete snapshot, with what a reader is shown of it: chosen by its
 * check (`presentation` in its module), stored with the alert and carried on its events, so a
 * renderer shows it without knowing any check.
 */
export interface Finding<C extends string = CheckName> extends Detection<C> {
  /** The details that matter to a reader, in order, named for people; the rest repeat the summary or labels. */
  facts: Fact[];
  /** The one-line form for compact messages ("step install: exit code 1"); absent: the summary says it best. */
  brief?: string;
}

/**
 * The hold of a problem whose start the source does not say (an app in maintenance): fired once the
 * lifecycle has seen it for `ms`, the config's `key`, which `alerts` names while it waits.
 */
export function heldFromFirstSighting(ms: number, key: string): Pick<Detection, 'holdForMs' | 'holdReason'> {
  return {
    holdForMs: ms,
    holdReason: `told once seen for ${formatDuration(ms, 'exact')} (${key}): the service does not say since when`,
  };
}
