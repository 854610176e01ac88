/**
 * The stop signal of one job cycle: aborted with the daemon's hard stop, or with a
 * {@link CycleDeadlineError} when the job's deadline (`jobs.deadline`) passes first.
 */
import { setMaxListeners } from 'node:events';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Clock } from '../lib/clock.js';
import { CycleDeadlineError } from './job-cycle.js';

/** A cycle's signal and the call that lets go of the hard stop and the deadline once it is over. */
export interface CycleSignal {
  signal: AbortSignal;
  release: () => void;
}

/**
 * Every request in flight and every wait for a token or a retry listens on the signal it is given,
 * so handing the shared hard-stop signal to all jobs put up to six jobs × `api.concurrency`
 * listeners on it at once (Node warns past 10). Derived per cycle, the shared signal carries one
 * listener per running job, and a cycle's own signal at most one per request in flight
 * (`concurrency`) plus a few.
 */
export function cycleSignal(options: {
  job: SnapshotJob;
  hardStop: AbortSignal;
  clock: Clock;
  /** `api.concurrency`. */
  concurrency: number;
  /** The job's deadline (ms); undefined or 0: none. */
  deadlineMs: number | undefined;
}): CycleSignal {
  const { job, hardStop, clock, deadlineMs } = options;
  const controller = new AbortController();
  // Per request in flight, a page read ahead of each walk, and the waits of the rate limit and whoami.
  setMaxListeners(2 * options.concurrency + 16, controller.signal);
  const onStop = () => controller.abort(hardStop.reason);
  if (hardStop.aborted) onStop();
  else hardStop.addEventListener('abort', onStop, { once: true });
  const timer = new AbortController();
  if (deadlineMs !== undefined && deadlineMs > 0) {
    clock.sleep(deadlineMs, timer.signal).then(
      () => controller.abort(new CycleDeadlineError(job, deadlineMs)),
      () => undefined, // released before the deadline
    );
  }
  return {
    signal: controller.signal,
    release: () => {
      hardStop.removeEventListener('abort', onStop);
      timer.abort();
    },
  };
}
