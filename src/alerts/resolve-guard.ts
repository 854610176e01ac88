/**
 * The guard against resolving en masse on an implausible answer.
 *
 * A snapshot is complete when every page of it was read, but a complete snapshot can still be
 * wrong: a service that suddenly answers an empty list (a namespace dropped from a token, a
 * misrouted proxy, a bug on its side) would resolve every open alert of the job at once, and tell
 * everyone that problems are over that nobody fixed. So when one cycle would resolve many of a
 * job's firing alerts at once, it resolves none of them until the same thing is seen on
 * `confirmCycles` consecutive complete cycles: a real mass fix is announced one cycle or so late;
 * a bad answer is never announced at all.
 *
 * Pure: the lifecycle keeps the count of consecutive suspect cycles in the state and asks here.
 */

/** `alerts.resolve_guard` of the config. */
export interface ResolveGuardOptions {
  /** A cycle is suspect only when it would resolve at least this many alerts. */
  minAlerts: number;
  /** …and more than this share (0..1) of the job's firing alerts. */
  maxShare: number;
  /** Consecutive suspect cycles, this one included, after which the resolutions go ahead. */
  confirmCycles: number;
}

/** What one cycle of one job would resolve. */
export interface ResolveGuardInput {
  /** Firing alerts of the job before this cycle. */
  firing: number;
  /** How many of them this cycle would resolve. */
  resolving: number;
  /** Consecutive suspect cycles before this one (0 when the last cycle was not suspect). */
  suspectBefore: number;
}

/** The guard's decision, with its named reason. */
export type ResolveGuardDecision =
  | { hold: false; suspectCycles: 0; reason: 'plausible' }
  | { hold: false; suspectCycles: 0; reason: 'confirmed'; confirmedAfter: number }
  | { hold: true; suspectCycles: number; reason: 'too many at once' };

/** Decides whether this cycle's resolutions go ahead. */
export function guardResolutions(input: ResolveGuardInput, options: ResolveGuardOptions): ResolveGuardDecision {
  const suspect = input.resolving >= options.minAlerts && input.resolving > options.maxShare * input.firing;
  if (!suspect) return { hold: false, suspectCycles: 0, reason: 'plausible' };
  const cycles = input.suspectBefore + 1;
  if (cycles >= options.confirmCycles)
    return { hold: false, suspectCycles: 0, reason: 'confirmed', confirmedAfter: cycles };
  return { hold: true, suspectCycles: cycles, reason: 'too many at once' };
}
