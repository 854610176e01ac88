/**
 * The guard against resolving en masse on an implausible answer.
 *
 * A snapshot is complete when every page of it was read, but a complete snapshot can still be
 * wrong: a service that suddenly answers an empty list (a namespace dropped from a token, a
 * misrouted proxy, a bug on its side) would resolve every open alert of the job at once, and tell
 * everyone that problems are over that nobody fixed. So when one cycle would resolve many of a
 * job's firing alerts at once, it resolves none of them until the same thing is seen on
 * `confirm_cycles` consecutive complete cycles: a real mass fix is announced one cycle or so late;
 * a bad answer is never announced at all.
 *
 * Pure: the lifecycle keeps the count of consecutive suspect cycles in the state and asks here.
 */
import type { Config } from '../config/load-config.js';

/**
 * `alerts.resolve_guard` of the config, as parsed: a cycle is suspect when it would resolve at
 * least `min_alerts` and more than `max_share` of the job's firing alerts; after `confirm_cycles`
 * consecutive suspect cycles, this one included, the resolutions go ahead.
 */
export type ResolveGuardOptions = Config['alerts']['resolve_guard'];

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
  const suspect = input.resolving >= options.min_alerts && input.resolving > options.max_share * input.firing;
  if (!suspect) return { hold: false, suspectCycles: 0, reason: 'plausible' };
  const cycles = input.suspectBefore + 1;
  if (cycles >= options.confirm_cycles)
    return { hold: false, suspectCycles: 0, reason: 'confirmed', confirmedAfter: cycles };
  return { hold: true, suspectCycles: cycles, reason: 'too many at once' };
}
