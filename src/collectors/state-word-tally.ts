/**
 * The `state` words a read met, counted: the reference leaves them open (§3, "not shown"), so the
 * daemon compares what the service says against the words its `checks.*` lists name, and says so
 * when the service speaks a word no list knows (`app/unknown-state-words.ts`).
 */

/** The kinds of record whose `state` the checks judge, and whose words are tallied. */
export type StateRecord = 'run' | 'server' | 'app' | 'upgrade' | 'installer' | 'backup';

/** How often each `state` word was met in one read of one kind of record. */
export class StateWordTally {
  readonly #counts = new Map<string, number>();

  constructor(readonly record: StateRecord) {}

  /** Counts one record's word. */
  see(word: string): void {
    this.#counts.set(word, (this.#counts.get(word) ?? 0) + 1);
  }

  /** Every word met, with its count. */
  counts(): ReadonlyMap<string, number> {
    return this.#counts;
  }
}
