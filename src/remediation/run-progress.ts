/**
 * How a followed run stands, judged from `runs.get` with the state words of the config: still
 * going, succeeded, failed (at which step, why), or ended in a state that is neither (cancelled,
 * say). A retrying run is still going: the service's own retry may yet succeed, and following
 * ends at `follow_timeout` in any case. Pure.
 */
import { runVerdict, type RunStateWords } from '../api/run-verdict.js';
import type { Run } from '../api/schemas.js';
import type { AttemptOutcome } from './outcome-notice.js';

/** The run state words following needs: all three, since it must tell success from an end. */
export type RunStates = Required<RunStateWords>;

/** Where a followed run is: still going, or over, as the attempt's outcome says it (`AttemptOutcome`). */
export type RunProgress =
  | { kind: 'going'; why: 'active_state' | 'retrying' | 'watcher_waiting' }
  | Extract<AttemptOutcome, { kind: 'succeeded' | 'run_failed' | 'run_ended' }>;

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
      return { kind: 'run_ended', state: run.state };
    case 'failed': {
      if (verdict.why === 'watcher_failed') {
        const { watcher } = run;
        return { kind: 'run_failed', step: null, reason: watcher?.reason ?? null, watcher: watcher?.state ?? null };
      }
      // The reference gives `reason` only as "why a step failed": the last step with one failed.
      const step = [...run.steps].reverse().find((s) => s.reason !== null);
      return { kind: 'run_failed', step: step?.name ?? null, reason: step?.reason ?? null, watcher: null };
    }
  }
}
