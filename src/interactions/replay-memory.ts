/**
 * What a receiver of Slack's clicks has already taken, so that the same one taken twice is acted
 * on once: over HTTP a signed body (posted again, or signed again, is a replay), over Socket Mode an
 * envelope's payload; and the on-call tools' webhooks, their posts' ids (with no end). Each key is kept
 * until its own end (when it could no longer be taken anyway), and at most {@link ReplayMemory}
 * `maxKeys` of them (the oldest forgotten first), so a peer cannot grow it without bound. It runs
 * in the threads that receive (the front door, the Socket Mode thread) and imports nothing.
 */

/** The keys a receiver took, each until its end. */
export class ReplayMemory {
  readonly #until = new Map<string, number>();

  constructor(private readonly maxKeys = 10_000) {}

  /**
   * True when `key` was taken before and is not yet forgotten (a replay); otherwise it is
   * remembered until `until` (ms, on the same time as `now`) and false is answered.
   */
  seen(key: string, until: number, now: number): boolean {
    for (const [k, end] of this.#until) if (end < now) this.#until.delete(k);
    if (this.#until.has(key)) return true;
    // The oldest first (a Map keeps insertion order).
    if (this.#until.size >= this.maxKeys) this.#until.delete(this.#until.keys().next().value!);
    this.#until.set(key, until);
    return false;
  }

  /** Forgets `key`: what it named was not carried out after all, so it may be taken again. */
  forget(key: string): void {
    this.#until.delete(key);
  }
}
