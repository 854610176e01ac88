/**
 * The records a cycle set aside (`api/quarantine.ts`), as the lifecycle sees them: the subjects
 * whose alerts it holds, each with the note the alert carries while held ("cannot be read now:
 * access_denied; held, not resolved"). An alert held is neither resolved nor dropped: the record
 * may still be failing, only unreadable this cycle. No detector needs to know.
 */
import { subjectKey, type Fact, type Subject } from '../lib/alert-vocabulary.js';
import { RESOLVED_SUMMARY } from '../detectors/finding.js';

/** Subject key (`subjectKey`: `run:42`, or `url:*` for every URL when a record's id could not be read) → note. */
export type HeldSubjects = ReadonlyMap<string, HeldNote>;

/**
 * Why a subject is held, where a later cycle acts on it: `unseen`, its app hidden from the token
 * (`collectors/vanished-records.ts`); `undecided`, an app whose newest backup may be the one set
 * aside, so nothing new is told of its backups until it is read. Kept as data beside the note, so
 * no code reads the note's words.
 */
export type HeldReason = 'unseen' | 'undecided';

/** A held subject's note, alone or with the {@link HeldReason} a later cycle reads back. */
export type HeldNote = string | { note: string; reason?: HeldReason };

/** The detail key and fact label a held alert carries its note under. */
export const HELD_DETAIL = 'held';
const HELD_LABEL = 'Held';

/** The detail key a held alert carries its {@link HeldReason} under: state, never shown as a fact or sent. */
export const HELD_REASON_DETAIL = 'held_reason';

/**
 * The note of an alert's (or a finding's) subject, or for one backup's, else of its app
 * (`details.app_id`), whose set-aside record decides it too; undefined when neither is held.
 */
export function heldNote(
  held: HeldSubjects | undefined,
  { subject, details }: { subject?: Subject | null; details: Readonly<Record<string, string>> },
): HeldNote | undefined {
  if (!held || held.size === 0) return undefined;
  const app = subject?.type === 'backup' ? held.get(`app:${details.app_id}`) : undefined;
  return (subject && (held.get(subjectKey(subject)) ?? held.get(`${subject.type}:*`))) ?? app;
}

/**
 * Details and facts with the held note (and its reason, if any) in them, replacing older ones, or
 * without them when `held` is undefined; the same objects when nothing changes.
 */
export function withHeldNote<T extends { details: Record<string, string>; facts: Fact[] | null }>(
  record: T,
  held: HeldNote | undefined,
): T {
  const note = typeof held === 'string' ? held : held?.note;
  const reason = typeof held === 'string' ? undefined : held?.reason;
  if (record.details[HELD_DETAIL] === note && record.details[HELD_REASON_DETAIL] === reason) return record;
  const { [HELD_DETAIL]: _note, [HELD_REASON_DETAIL]: _reason, ...details } = record.details;
  const facts = (record.facts ?? []).filter((f) => f.label !== HELD_LABEL);
  if (note !== undefined) {
    details[HELD_DETAIL] = note;
    if (reason !== undefined) details[HELD_REASON_DETAIL] = reason;
    facts.push({ label: HELD_LABEL, value: note });
  }
  return { ...record, details, facts };
}

/**
 * An alert's details as they leave the daemon (its events, `alerts --json`): without the
 * {@link HeldReason} and the `RESOLVED_SUMMARY`, state that no receiver or reader is shown.
 */
export function shownDetails(details: Record<string, string>): Record<string, string> {
  const { [HELD_REASON_DETAIL]: reason, [RESOLVED_SUMMARY]: summary, ...shown } = details;
  return reason === undefined && summary === undefined ? details : shown;
}
