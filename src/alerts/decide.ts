/**
 * The lifecycle's rules as one pure function: given what is stored about a fingerprint and what
 * the latest complete snapshot says, what happens now, and why. Keeping it pure lets the rules be
 * read (and tested) as a table; `applyFindings` only carries the decisions out.
 */
import type { EscalationReason, Finding } from '../detectors/finding.js';
import { SEVERITY_RANK, type Severity } from '../lib/alert-vocabulary.js';
import { formatDuration } from '../lib/format-duration.js';
import type { AlertRow } from './alert-store.js';

/** The rules' knobs, from `alerts.*` in the config (whose schema refuses a `for` below 1 and a 0s interval). */
export interface LifecycleOptions {
  /** Consecutive complete snapshots a finding must appear in before it fires; 1 fires at once. */
  forCycles: number;
  /** How long a firing alert stays quiet before it is announced again; Infinity never repeats. */
  repeatIntervalMs: number;
}

/** What to do with one fingerprint this cycle. */
export type DecisionAction =
  /** Nothing to announce (the row is still refreshed when the finding is present). */
  | 'none'
  /** Keep (or start) waiting: seen, but not yet for long enough. */
  | 'pend'
  /** Start firing: write a `firing` event. */
  | 'fire'
  /** Still firing and quiet for `repeatIntervalMs`: write a `repeat` event. */
  | 'repeat'
  /** Still firing and worse than before: write an `escalated` event. */
  | 'escalate'
  /** Firing and gone from a complete snapshot: write a `resolved` event. */
  | 'resolve'
  /** Pending and gone: forget it without a word (flap damping). */
  | 'drop';

/** Why; shown in logs and carried by the event (Alertmanager's dedup style). */
export type DecisionReason =
  | 'first sighting'
  | `seen for ${number} cycles`
  | `seen ${number} of ${number} cycles`
  | `held for ${string}`
  | `held ${string} of ${string}`
  | 'still firing'
  | 'repeat interval elapsed'
  | 'acknowledged'
  | 'retry under way'
  | EscalationReason
  | `severity rose ${Severity}→${Severity}`
  | `severity fell ${Severity}→${Severity}`
  | `severity back to ${Severity}, as told before`
  | 'absent from complete snapshot'
  | 'gone before it fired'
  | typeof FOLDED_REASON
  | 'not open';

/**
 * Why an alert closed because another alert of ours reports the same problem (an attention item
 * folded into it): its resolve is no news, so the notify stage sends it nowhere a page would go.
 */
export const FOLDED_REASON = 'folded into another alert';

/** One decision with its named reason. */
export interface Decision {
  action: DecisionAction;
  reason: DecisionReason;
}

/**
 * Decides one fingerprint's fate this cycle. `previous` is its stored row (undefined if never seen,
 * or a resolved row: both start a new life); `finding` is its finding in this complete snapshot
 * (undefined: absent). `told` is the worst severity the firing alert was announced at in this life
 * (its firing and escalations), when its severity fell since: rising back to it is no news.
 */
export function decide(
  previous: AlertRow | undefined,
  finding: Finding | undefined,
  now: number,
  options: LifecycleOptions,
  told?: Severity,
): Decision {
  const open = previous && previous.status !== 'resolved' ? previous : undefined;

  if (!finding) {
    if (open?.status === 'firing') return { action: 'resolve', reason: 'absent from complete snapshot' };
    if (open?.status === 'pending') return { action: 'drop', reason: 'gone before it fired' };
    return { action: 'none', reason: 'not open' };
  }

  if (open?.status === 'firing') {
    const rose = SEVERITY_RANK[finding.severity] > SEVERITY_RANK[open.severity];
    if (rose && (told === undefined || SEVERITY_RANK[finding.severity] > SEVERITY_RANK[told])) {
      return { action: 'escalate', reason: `severity rose ${open.severity}→${finding.severity}` };
    }
    if (finding.escalation) return { action: 'escalate', reason: finding.escalation };
    // Its record is being worked on again (a retry): the alert says so, and nobody is reminded of it.
    if (finding.underway) return { action: 'none', reason: 'retry under way' };
    if (now - (open.lastNotifiedAt ?? open.firedAt ?? open.firstSeenAt) >= options.repeatIntervalMs) {
      // Someone has it: reminding them is noise. An escalation (above) is news, and still goes.
      if (open.acknowledgement) return { action: 'none', reason: 'acknowledged' };
      return { action: 'repeat', reason: 'repeat interval elapsed' };
    }
    if (SEVERITY_RANK[finding.severity] < SEVERITY_RANK[open.severity]) {
      return { action: 'none', reason: `severity fell ${open.severity}→${finding.severity}` };
    }
    if (rose) return { action: 'none', reason: `severity back to ${finding.severity}, as told before` };
    return { action: 'none', reason: 'still firing' };
  }

  // Not firing, and its record is being worked on again: nothing to announce yet, whatever the waits.
  if (finding.underway) {
    return { action: 'pend', reason: 'retry under way' };
  }

  // New (or pending): count this sighting and see whether both waits are over. `holdForMs` is
  // measured from the first sighting of this life; a pending finding that vanished was dropped,
  // so "since first sighting" is "continuously".
  const seen = open ? open.seenCount + 1 : 1;
  const held = open ? now - open.firstSeenAt : 0;
  const hold = finding.holdForMs ?? 0;
  const cyclesDone = seen >= options.forCycles;
  const holdDone = held >= hold;
  if (cyclesDone && holdDone) {
    if (hold > 0) return { action: 'fire', reason: `held for ${formatDuration(held, 'seconds')}` };
    if (seen > 1) return { action: 'fire', reason: `seen for ${seen} cycles` };
    return { action: 'fire', reason: 'first sighting' };
  }
  if (!cyclesDone) return { action: 'pend', reason: `seen ${seen} of ${options.forCycles} cycles` };
  return { action: 'pend', reason: `held ${formatDuration(held, 'seconds')} of ${formatDuration(hold, 'seconds')}` };
}
