/**
 * The stop signal of one job cycle: aborted with the daemon's hard stop, or with a
 * {@link ReadCeilingError} when the read's ceiling (`jobs.read_ceiling`) passes first. The ceiling
 * does not come from the job's schedule: a read that overruns its schedule finishes.
 */
import { setMaxListeners } from 'node:events';
import type { SnapshotJob } from '../collectors/snapshot.js';
import type { Clock } from '../lib/clock.js';
import { clockTimeout } from '../lib/clock-timeout.js';
import { ReadCeilingError } from './read-ceiling.js';

/**
 * A cycle's signal, and the call that lets go of the hard stop and the ceiling once it is over.
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
  /** The read's ceiling (ms, `readCeilingMs`); undefined or 0: none. */
  ceilingMs: number | undefined;
}): { signal: AbortSignal; release: () => void } {
  const { job, hardStop, clock, ceilingMs } = options;
  const ceiling = ceilingMs !== undefined && ceilingMs > 0 ? ceilingMs : undefined;
  const { signal, dispose } = clockTimeout(clock, ceiling, () => new ReadCeilingError(job, ceilingMs ?? 0), hardStop);
  // Per request in flight, a page read ahead of each walk, and the waits of the rate limit and whoami.
  setMaxListeners(2 * options.concurrency + 16, signal);
  return { signal, release: dispose };
}
