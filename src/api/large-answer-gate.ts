/**
 * One large answer at a time, across every request of a client.
 *
 * `api.max_answer_size` caps one answer, but jobs read many at once (`api.concurrency` per job, a
 * page ahead, several jobs): eight answers just under the cap, read and parsed together, took the
 * daemon past 350 MB. So an answer that grows past {@link LARGE_ANSWER_BYTES} must hold this gate
 * to read on, and holds it until it is parsed; any other that grows that large meanwhile is paused
 * (undici stops reading its socket) until the gate is free. Ordinary answers, all far below the
 * mark, never meet it. No deadlock: the holder is never paused by the gate, so it always finishes
 * (or fails, or is aborted), and leaving is all the others wait for.
 */

/** An answer past this size needs the gate to go on: the size from which parsing one costs tens of MB. */
export const LARGE_ANSWER_BYTES = 1024 * 1024;

/** The gate of one client. */
export class LargeAnswerGate {
  #holder: object | undefined;
  readonly #queue: { owner: object; go: () => void }[] = [];

  /**
   * True when `owner` may read on now: it holds the gate, or took it. Otherwise `go` is called once
   * the gate is its (the owner pauses until then).
   */
  enter(owner: object, go: () => void): boolean {
    if (this.#holder === owner) return true;
    if (this.#holder === undefined) {
      this.#holder = owner;
      return true;
    }
    if (!this.#queue.some((q) => q.owner === owner)) this.#queue.push({ owner, go });
    return false;
  }

  /** `owner` is done (parsed, failed or aborted): the gate passes to the next in line. Idempotent. */
  leave(owner: object): void {
    const queued = this.#queue.findIndex((q) => q.owner === owner);
    if (queued !== -1) this.#queue.splice(queued, 1);
    if (this.#holder !== owner) return;
    const next = this.#queue.shift();
    this.#holder = next?.owner;
    next?.go();
  }
}
