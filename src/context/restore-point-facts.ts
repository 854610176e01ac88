/**
 * What a failed update's or upgrade's restore point tells an on-call engineer, decided without
 * I/O: the restore point that belongs to the run, whether the app was kept as before or may be
 * half-updated (its outcome), whether the change can be undone at once and until when, and which
 * backup was taken first. The reference's own words (`outcome`, `instant_undo`, `kept_until`,
 * `held`) said in ours.
 */
import type { RestorePoint } from '../api/schemas.js';
import type { Fact } from '../lib/alert-vocabulary.js';

/** What each outcome (reference §3) means for the app. */
const OUTCOME_WORDS: Readonly<Record<RestorePoint['outcome'], string>> = {
  kept: 'the change failed and the app was left as before',
  failed: 'the change failed part-way: the app may be half-updated',
  applied: 'the change was applied',
  running: 'the change is still being applied',
};

/**
 * The facts of a run's restore point, in the order a reader needs them: the state the app was
 * left in, instant undo (possible, and until when), the backup taken first, and a hold.
 */
export function restorePointFacts(point: RestorePoint): Fact[] {
  const facts: Fact[] = [
    { label: 'Restore point', value: `#${point.id} ${point.outcome}: ${OUTCOME_WORDS[point.outcome]}` },
    { label: 'Instant undo', value: point.instant_undo ? 'possible' : 'not possible' },
  ];
  if (point.instant_undo && point.kept_until)
    facts.push({ label: 'Undo possible until', value: point.kept_until, kind: 'time' });
  const backup = point.backup ?? (point.backup_id === null ? null : `#${point.backup_id}`);
  facts.push({
    label: 'Backup first',
    value:
      backup === null
        ? 'none'
        : `${backup}${point.backup_id !== null && point.backup ? ` (#${point.backup_id})` : ''}, ${point.backup_verified ? 'verified' : 'not verified'}`,
  });
  if (point.held) facts.push({ label: 'Held', value: 'rolled back to this point: automatic updates wait' });
  return facts;
}
