/**
 * The one verdict on where a run stands, for failed_runs, stuck_runs and remediation's following
 * alike: from the reference's stated facts (§3) and the state words of the config (the reference
 * leaves the words open). Each caller reads the verdict its own way (a grace for `retrying`, say),
 * but what counts as failed, going or retrying is said once, here.
 */
import type { Run, RunListItem, WatcherState } from './schemas.js';

/** Watcher states of the reference (§3) that end a run badly: "why it failed, timed out or stopped". */
export const WATCHER_FAILURES: ReadonlySet<string> = new Set<WatcherState>(['failed', 'timeout', 'stopped']);

/** The run state words of the config; a list left out: no word means that. */
export interface RunStateWords {
  /** `checks.failed_runs.failed_states`. */
  failed?: readonly string[];
  /** `checks.stuck_runs.active_states`. */
  active?: readonly string[];
  /** `checks.failed_runs.succeeded_states`. */
  succeeded?: readonly string[];
}

/** The verdict on a run: where it stands. */
export type RunVerdict =
  /** Failed: a failed state word (not retrying), or a watcher that reported failure. */
  | { kind: 'failed'; why: 'failed_state' | 'watcher_failed' }
  /**
   * In a failed state, but the service will retry the failed step by itself: not failed yet
   * (§3.1). Its own verdict, since how long "not yet" lasts is the caller's to say.
   */
  | { kind: 'retrying' }
  /** Still going: an active state word, or a watcher still waiting on the server (§3.2). */
  | { kind: 'active'; why: 'active_state' | 'watcher_waiting' }
  /** A succeeded state word. */
  | { kind: 'succeeded' }
  /** A state in no list given (cancelled, say, or succeeded when no succeeded words were given). */
  | { kind: 'other' };

/**
 * Judges a run from its state, `retrying` and, where it was read (`runs.get`), its watcher. A
 * watcher decides while it is there (§3.2): waiting is going and a reported failure is failed,
 * whatever the run's own state says; otherwise the state words do, failed before active.
 */
export function runVerdict(
  run: Pick<RunListItem, 'state' | 'retrying'>,
  watcher: Run['watcher'] | undefined,
  words: RunStateWords,
): RunVerdict {
  if (watcher && WATCHER_FAILURES.has(watcher.state)) return { kind: 'failed', why: 'watcher_failed' };
  if (watcher?.state === 'waiting') return { kind: 'active', why: 'watcher_waiting' };
  if (words.failed?.includes(run.state)) {
    return run.retrying ? { kind: 'retrying' } : { kind: 'failed', why: 'failed_state' };
  }
  if (words.active?.includes(run.state)) return { kind: 'active', why: 'active_state' };
  if (words.succeeded?.includes(run.state)) return { kind: 'succeeded' };
  return { kind: 'other' };
}
