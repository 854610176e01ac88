/**
 * The `state` words a read met that no list of `checks.*` names. The reference leaves the words
 * open (§3), so a service may say `failed` where the defaults say `error`; every run in that state
 * would then be judged by no check, silently. The daemon says so, once per word while a
 * configuration runs, naming the lists it could belong to.
 */
import type { StateRecord, StateWordTally } from '../collectors/state-word-tally.js';
import type { NamedStateList } from '../detectors/registry.js';

/** A word no list names, and how many records of the read said it. */
export interface UnknownStateWord {
  record: StateRecord;
  word: string;
  count: number;
}

/** The list function each kind of record is read with. */
const READ_BY: Readonly<Record<StateRecord, string>> = {
  run: 'runs.list',
  server: 'servers.list',
  app: 'apps.list',
  upgrade: 'apps.get',
  installer: 'installers.list',
  backup: 'backups.list',
};

/** The words of `tally` in none of the lists of its kind of record, most frequent first. */
export function unknownStateWords(
  tally: StateWordTally,
  lists: ReadonlyMap<StateRecord, readonly NamedStateList[]>,
): UnknownStateWord[] {
  const known = new Set((lists.get(tally.record) ?? []).flatMap((l) => l.words));
  const out: UnknownStateWord[] = [];
  for (const [word, count] of tally.counts()) {
    if (!known.has(word)) out.push({ record: tally.record, word, count });
  }
  return out.sort((a, b) => b.count - a.count || a.word.localeCompare(b.word));
}

/** The warning for one unknown word: what was seen, what it means, and which lists to put it in. */
export function unknownStateWordWarning(
  unknown: UnknownStateWord,
  lists: ReadonlyMap<StateRecord, readonly NamedStateList[]>,
): string {
  const { record, word, count } = unknown;
  const named = (lists.get(record) ?? []).map((l) => `${l.key}: ${l.words.join(', ') || '(none)'}`).join('; ');
  return (
    `${READ_BY[record]} reports the ${record} state ${JSON.stringify(word)} (${count} ${record}${count === 1 ? '' : 's'}), ` +
    `which no list of checks.* names, so no check judges ${count === 1 ? 'it' : 'them'}. ` +
    `Add it to the list it means (${named})`
  );
}
