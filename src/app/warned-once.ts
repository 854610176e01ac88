/**
 * The warnings a running configuration says once per value the service sent (an unknown state
 * word, a value beyond the stated ones), and how many it says: the values are the service's,
 * so one that sends a new value on every record or every cycle (an error text in a state field)
 * would otherwise add a warning line and a remembered key each time, for months.
 */
import { getOrAdd } from '../lib/get-or-add.js';

/** Values told apart per group (a record kind, a function's field) before the group goes quiet. */
const VALUES_PER_GROUP = 20;

/** What to say of one value: warn of it; warn of it and say no more of its group; nothing. */
export type WarnedOnceAnswer = 'warn' | 'last' | 'quiet';

/** See the file's comment: once per value, at most {@link VALUES_PER_GROUP} values a group. */
export class WarnedOnce {
  readonly #said = new Map<string, Set<string>>();

  constructor(private readonly perGroup = VALUES_PER_GROUP) {}

  /** Whether to warn of `value` of `group` now; remembers it. */
  take(group: string, value: string): WarnedOnceAnswer {
    const said = getOrAdd(this.#said, group, () => new Set<string>());
    if (said.size >= this.perGroup || said.has(value)) return 'quiet';
    said.add(value);
    return said.size === this.perGroup ? 'last' : 'warn';
  }
}
