/**
 * The records a cycle set aside (`api/quarantine.ts`), as the lifecycle sees them: the subjects
 * whose alerts it holds, each with the note the alert carries while held ("cannot be read now:
 * access_denied; held, not resolved"). An alert held is neither resolved nor dropped: the record
 * may still be failing, only unreadable this cycle. No detector needs to know.
 */
import type { Fact, Subject } from '../lib/alert-vocabulary.js';

/** Subject key (`run:42`, or `url:*` for every URL when a record's id could not be read) → note. */
export type HeldSubjects = ReadonlyMap<string, string>;

/** The detail key and fact label a held alert carries its note under. */
export const HELD_DETAIL = 'held';
const HELD_LABEL = 'Held';

/** The key of a subject in {@link HeldSubjects}: `type:id`, or `type:*` for every subject of a type. */
export function subjectKey(subject: Subject): string {
  return `${subject.type}:${subject.id ?? '*'}`;
}

/** The note of a held subject, or undefined when the alert's subject is not held. */
export function heldNote(held: HeldSubjects | undefined, subject: Subject | null | undefined): string | undefined {
  if (!held || held.size === 0 || !subject) return undefined;
  return held.get(subjectKey(subject)) ?? held.get(`${subject.type}:*`);
}

/**
 * Details and facts with the held note in them (replacing an older note), or without it when
 * `note` is undefined; the same objects when nothing changes.
 */
export function withHeldNote<T extends { details: Record<string, string>; facts: Fact[] | null }>(
  record: T,
  note: string | undefined,
): T {
  if (record.details[HELD_DETAIL] === note) return record;
  const details = { ...record.details };
  delete details[HELD_DETAIL];
  const facts = (record.facts ?? []).filter((f) => f.label !== HELD_LABEL);
  if (note !== undefined) {
    details[HELD_DETAIL] = note;
    facts.push({ label: HELD_LABEL, value: note });
  }
  return { ...record, details, facts };
}
