/**
 * How a followed run stands, judged from `runs.get` with the state words of the config (the
 * reference leaves them open): still going, succeeded, failed (at which step, why), or ended in a
 * state that is neither (cancelled, say). Pure.
 */
import type { Run, WatcherState } from '../api/schemas.js';
import { watcherFailed } from '../api/watcher-failed.js';

/** The run state words the judgement needs (`checks.failed_runs.failed_states`, …). */
export interface RunStates {
  failed: readonly string[];
  active: readonly string[];
  succeeded: readonly string[];
}

/** Where a followed run is. */
export type RunProgress =
  | { kind: 'going'; why: 'active_state' | 'retrying' | 'watcher_waiting' }
  | { kind: 'succeeded' }
  | { kind: 'failed'; step: string | null; reason: string | null; watcher: WatcherState | null }
  | { kind: 'ended'; state: string };

/** Judges a run read with `runs.get`. */
export function runProgress(run: Run, states: RunStates): RunProgress {
  const watcher = run.watcher;
  if (watcher && watcherFailed(watcher.state)) {
    return { kind: 'failed', step: null, reason: watcher.reason, watcher: watcher.state };
  }
  // §3.2: a run with a watcher stays running until the watcher reports back.
  if (watcher?.state === 'waiting') return { kind: 'going', why: 'watcher_waiting' };
  if (states.failed.includes(run.state)) {
    // §3.1: in error but retrying is not failed yet; the service's own retry may still succeed.
    if (run.retrying) return { kind: 'going', why: 'retrying' };
    // The reference gives `reason` only as "why a step failed": the last step with one failed.
    const step = [...run.steps].reverse().find((s) => s.reason !== null);
    return { kind: 'failed', step: step?.name ?? null, reason: step?.reason ?? null, watcher: null };
  }
  if (states.active.includes(run.state)) return { kind: 'going', why: 'active_state' };
  if (states.succeeded.includes(run.state)) return { kind: 'succeeded' };
  return { kind: 'ended', state: run.state };
}
