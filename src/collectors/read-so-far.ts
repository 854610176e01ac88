/**
 * What a collector has read so far, for when a hard bound cuts its read (`jobs.read_ceiling`, the
 * bounds on a list's items and an answer's bytes). A collector that can say what it read before the
 * cut offers a way to build that snapshot as it goes; the job cycle takes it only after a cut,
 * flagged `partial`, and lets it fire alerts, never resolve them (`app/partial-cycle.ts`).
 * Only what the service answered goes in: a partial snapshot is a true part, never a guess.
 */
import type { Snapshot } from './snapshot.js';

/** The snapshot of one read in progress, built on demand from what the collector holds. */
export class ReadSoFar {
  #build: (() => Snapshot | undefined) | undefined;

  /**
   * The collector says how to build a snapshot of what it has read at any moment of its read;
   * `build` answers undefined while nothing is read (a read cut at its first answer simply failed).
   */
  offer(build: () => Snapshot | undefined): void {
    this.#build = build;
  }

  /** What was read before the cut, flagged partial with `why`; undefined when the collector offered nothing. */
  take(why: string): Snapshot | undefined {
    const snapshot = this.#build?.();
    return snapshot && { ...snapshot, partial: why };
  }
}
