/**
 * How a followed run stands, judged from `runs.get` with the state words of the config: still
 * going, succeeded, failed (at which step, why), or ended in a state that is neither (cancelled,
 * say). A retrying run is still going: the service's own retry may yet succeed, and following
 * ends at `follow_timeout` in any case. Pure.
 */
import { runVerdict, type RunStateWords } from '../api/run-verdict.js';
import type { Run, WatcherState } from '../api/schemas.js';

/** The run state words following needs: all three, since it must tell success from an end. */
export type RunStates = Required<RunStateWords>;

/** Where a followed run is. */
export type RunProgress =
  | { kind: 'going'; why: 'active_state' | 'retrying' | 'watcher_waiting' }
  | { kind: 'succeeded' }
  | { kind: 'failed'; step: string | null; reason: string | null; watcher: WatcherState | null }
  | { kind: 'ended'; state: string };

/** Judges a run read with `runs.get`. */
export function runProgress(run: Run, states: RunStates): RunProgress {
  const verdict = runVerdict(run, run.watcher, states);
  switch (verdict.kind) {
    case 'active':
      return { kind: 'going', why: verdict.why };
    case 'retrying':
      return { kind: 'going', why: 'retrying' };
    case 'succeeded':
      return { kind: 'succeeded' };
    case 'other':
      return { kind: 'ended', state: run.state };
    case 'failed': {
      if (verdict.why === 'watcher_failed') {
        return { kind: 'failed', step: null, reason: run.watcher?.reason ?? null, watcher: run.watcher?.state ?? null };
      }
      // The reference gives `reason` only as "why a step failed": the last step with one failed.
      const step = [...run.steps].reverse().find((s) => s.reason !== null);
      return { kind: 'failed', step: step?.name ?? null, reason: step?.reason ?? null, watcher: null };
    }
  }
}
