import type { WatcherState } from './schemas.js';

/** Watcher states of the reference (§3) that end a run badly: "why it failed, timed out or stopped". */
const FAILURES: ReadonlySet<WatcherState> = new Set<WatcherState>(['failed', 'timeout', 'stopped']);

/**
 * True when a run's watcher reported failure (failed, timeout, stopped): the run failed whatever
 * its own state says, since a run with a watcher stays running until the watcher reports back (§3.2).
 * The one place that reads the watcher's words, for the detectors and for remediation.
 */
export function watcherFailed(state: WatcherState | null | undefined): boolean {
  return state !== null && state !== undefined && FAILURES.has(state);
}
