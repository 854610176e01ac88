/**
 * The last scheduled slot each job's cycle covered, for replicas that take over from each other
 * (PostgreSQL, `state.url`): a slot is the time of the schedule a cycle ran for (node-cron's time
 * of the tick, wall clock), or the time a cycle run at once began; a cycle covers every slot up to
 * its own. It is written in the cycle's own transaction (fenced like the rest of it), so it is on
 * record exactly when the cycle's results are. A new leader then neither runs a slot its
 * predecessor ran, nor waits a whole interval for a job its predecessor left behind.
 */
import type { Store } from '../state/store.js';

const KEY = 'job_slot:';

/** The jobs' last slots, in `meta`. */
export class JobSlots {
  constructor(private readonly store: Store) {}

  /** The last slot `job`'s cycles covered (epoch ms), or undefined when none is on record. */
  last(job: string): number | undefined {
    const value = this.store.getMeta(`${KEY}${job}`);
    return value === undefined ? undefined : Number(value);
  }

  /** `job` covered `slot`; call inside the cycle's transaction. */
  record(job: string, slot: number): void {
    if (!this.covered(job, slot)) this.store.setMeta(`${KEY}${job}`, String(slot));
  }

  /** A cycle already covered the scheduled `slot` of `job` (another leader's, before a takeover). */
  covered(job: string, slot: number): boolean {
    const last = this.last(job);
    return last !== undefined && last >= slot;
  }

  /**
   * At a takeover: whether `job` is run at once, because its last slot is older than one interval
   * of its schedule (or there is none): its predecessor missed a slot. Otherwise its next tick is
   * soon enough, and a cycle now would run again what was just run.
   */
  dueAtTakeover(job: string, now: number, intervalMs: number): boolean {
    const last = this.last(job);
    return last === undefined || now - last > intervalMs;
  }
}
