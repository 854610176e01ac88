/**
 * Keeps the state file's lease (`state/runner-lease.ts`) while this process works on it: renewed
 * on a real timer (the lease is between processes, not on the daemon's clock), three times per
 * lease. A renewal that fails (a file gone bad) is said once a minute with a count
 * (`lib/repeated-log.ts`), not at every tick of a long outage. One that finds the lease taken over
 * by another process (this one stalled past it) ends this process's work: two would send twice.
 */
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { RepeatedLog } from '../lib/repeated-log.js';
import { LEASE_TTL_MS, LeaseLostError, type RunnerLease } from '../state/runner-lease.js';

/** A lease kept by {@link runnerLeaseRenewal}. */
export type LeaseRenewal = ReturnType<typeof runnerLeaseRenewal>;

/**
 * Starts renewing `lease`. A lease that another process holds now is not taken back: renewing
 * stops, `lost` aborts and `onLost` is told.
 */
export function runnerLeaseRenewal(
  lease: RunnerLease,
  log: Logger,
  clock: Clock,
  onLost: (err: LeaseLostError) => void,
) {
  const quiet = new RepeatedLog(log, { clock });
  const lost = new AbortController();
  const timer = setInterval(() => {
    try {
      lease.renew();
    } catch (err) {
      if (err instanceof LeaseLostError) {
        clearInterval(timer);
        log.fatal({ holder: err.holder }, err.message);
        lost.abort(err);
        onLost(err);
        return;
      }
      quiet.warn({ err }, 'cannot renew the lease on the state file; another run or check may start');
    }
  }, LEASE_TTL_MS / 3);
  timer.unref();
  return {
    /** Aborted (with the {@link LeaseLostError}) once another process holds the lease: renewing has stopped. */
    lost: lost.signal,
    /** Stops renewing and gives the lease up. */
    release: () => {
      clearInterval(timer);
      lease.release();
    },
  };
}
