/**
 * Which words the simulated service writes in `state` fields. The reference leaves them open
 * (§3: "not shown"), so another service may well say `failed` where this one says `error`. The
 * simulator keeps its records in its own words (VOCABULARY) and translates at the edge: every
 * `state` of an answer on the way out, every `state` filter of a list on the way in. The control
 * interface takes and keeps the default words.
 */
import { VOCABULARY } from './vocabulary.js';

/** The vocabularies the simulator can speak, the default first. */
export const STATE_WORD_SETS = ['default', 'alt'] as const;
/** A vocabulary of the simulator. */
export type StateWordSet = (typeof STATE_WORD_SETS)[number];
/** A kind of record whose `state` has words of its own. */
export type StateKind = keyof typeof VOCABULARY;

/**
 * The second vocabulary, word for word against VOCABULARY: what another implementation of the
 * same service plausibly says. No word here is the default word of the same meaning.
 */
export const ALT_VOCABULARY = {
  run: { queued: 'pending', running: 'in_progress', done: 'succeeded', error: 'failed', cancelled: 'canceled' },
  step: { pending: 'waiting', running: 'in_progress', done: 'succeeded', error: 'failed', skipped: 'not_run' },
  app: {
    running: 'active',
    stopped: 'inactive',
    deploying: 'provisioning',
    error: 'failed',
    deleted: 'removed',
    disabled: 'suspended',
  },
  backup: { running: 'in_progress', done: 'success', failed: 'error' },
  offsite: { uploaded: 'stored', uploading: 'transferring', failed: 'error', deleted: 'removed' },
  server: {
    running: 'up',
    provisioning: 'building',
    stopped: 'off',
    error: 'failed',
    unreachable: 'down',
    deleted: 'destroyed',
  },
  installer: { running: 'active', stopped: 'inactive', error: 'failed', deleted: 'removed' },
  url: { active: 'live', pending: 'waiting', error: 'failed' },
  upgrade: { requested: 'open', testing: 'in_test', standby: 'on_hold', done: 'finished', failed: 'error' },
} as const satisfies { [K in StateKind]: Record<keyof (typeof VOCABULARY)[K], string> };

/** Translates state words between the simulator's records and its answers. */
export class StateWords {
  private readonly out: Map<StateKind, Map<string, string>> | null;
  private readonly back: Map<StateKind, Map<string, string>> | null;

  constructor(set: StateWordSet) {
    if (set === 'default') {
      this.out = null;
      this.back = null;
      return;
    }
    const kinds = Object.keys(ALT_VOCABULARY) as StateKind[];
    this.out = new Map(kinds.map((k) => [k, new Map(Object.entries(ALT_VOCABULARY[k]))]));
    this.back = new Map(
      kinds.map((k) => [k, new Map(Object.entries(ALT_VOCABULARY[k]).map(([from, to]) => [to, from]))]),
    );
  }

  /** A record's word as the answer writes it (a word outside the vocabulary is written as it is). */
  write(kind: StateKind, word: string): string;
  write(kind: StateKind, word: string | null): string | null;
  write(kind: StateKind, word: string | null): string | null {
    if (word === null || !this.out) return word;
    return this.out.get(kind)?.get(word) ?? word;
  }

  /**
   * A `state` filter's word as the records hold it; null for a default word this vocabulary does
   * not speak (it matches nothing, as it would at that service). Other words pass as they are.
   */
  read(kind: StateKind, word: string): string | null {
    if (!this.back) return word;
    const own = this.back.get(kind)?.get(word);
    if (own !== undefined) return own;
    return (Object.values(VOCABULARY[kind]) as string[]).includes(word) ? null : word;
  }
}
