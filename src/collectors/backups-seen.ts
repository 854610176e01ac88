/**
 * What a backup's state says and how far an app's backups must be read: shared by the backups
 * collector, which stops reading an app once nothing older can change the judgement, and the
 * backups detector, which judges what was read. Here, on the collectors' side, because data flows
 * from collectors to detectors: a detector may import this, a collector never imports a detector.
 */
import { parseTime } from '../lib/parse-time.js';
import type { BackupsSeen } from './snapshot.js';
import type { NewestBackup } from './views.js';

/**
 * The backup state words of the service, by their keys in `checks.backups` (the section itself is
 * one); no word is in two lists. Its own type, not the config's: the config imports the check
 * registry, so a collector that imported it would close a circle through the backups check.
 */
export interface BackupStates {
  /** Finished well: the only backups that count as taken. */
  succeeded_states: readonly string[];
  /** Still being made. */
  running_states: readonly string[];
  failed_states: readonly string[];
  /**
   * Backup formats that count as full; absent: every format. A backup that succeeded in another
   * format (a `dump`, the database alone) is `partial`: the app cannot be restored from it whole. A
   * null format counts as full: the reference's own change takes `zip` unless told `dump`, and a
   * service that leaves the field empty would otherwise make every app stale, a loud cost for a
   * field that says nothing.
   */
  full_formats?: readonly string[];
}

/** What a backup's `state` (and format) says of it. */
export type BackupOutcome = 'good' | 'partial' | 'running' | 'failed' | 'unknown';

/**
 * What a backup's `state` says, by the configured words. A null state (the reference allows it) or
 * a word in no list is `unknown`: neither taken nor failed. Counting a null state as finished well
 * would be the unsafe reading: a service that fills the state in only at the end would have every
 * backup it starts clear the stale alert, the false resolution this check must not make; the cost
 * of the safe reading is a loud one (every app stale, its newest backup shown "(no state)"), never a
 * silent one. A backup in a succeeded state without a time cannot show that anything is recent: it
 * is `unknown` too.
 */
export function backupOutcome(
  backup: Pick<NewestBackup, 'state' | 'taken_at'> & Partial<Pick<NewestBackup, 'format'>>,
  states: BackupStates,
): BackupOutcome {
  const state = backup.state;
  if (state === null) return 'unknown';
  if (states.running_states.includes(state)) return 'running';
  if (states.failed_states.includes(state)) return 'failed';
  if (states.succeeded_states.includes(state)) {
    if (parseTime(backup.taken_at) === null) return 'unknown';
    return isFull(backup, states) ? 'good' : 'partial';
  }
  return 'unknown';
}

/** Whether the backup's format counts as full (see {@link BackupStates.full_formats}). */
export function isFull(backup: Partial<Pick<NewestBackup, 'format'>>, states: BackupStates): boolean {
  const format = backup.format ?? null;
  return format === null || states.full_formats === undefined || states.full_formats.includes(format);
}

/**
 * `seen` with the app's next backup added, the backups coming newest first (`backups.list`): the
 * first is the newest, the first good or failed one the newest finished, the first good one the
 * newest good, and the next `history` good ones (id and size) its `previous`. A partial backup (a
 * dump) is none of them. Starts the record when `seen` is absent, else changes it in place.
 */
export function seeBackup(
  seen: BackupsSeen | undefined,
  backup: NewestBackup,
  states: BackupStates,
  history = 0,
): BackupsSeen {
  const out = seen ?? { newest: backup };
  const outcome = backupOutcome(backup, states);
  if (outcome === 'good' || outcome === 'failed') out.finished ??= backup;
  if (outcome !== 'good') return out;
  if (!out.good) out.good = backup;
  else if ((out.previous ??= []).length < history) out.previous.push({ id: backup.id, size_mb: backup.size_mb });
  return out;
}

/**
 * Why nothing older than `last`, the app's backup just seen, can change what the check reports:
 * `good` once the newest good backup is known and, with a size `history`, that many good ones
 * before it; `max_age` once the newest finished one is known and `last` is older than `horizon`
 * (now − the app's max_age), since a good backup further down is stale anyway: then `seen` is
 * marked `stopped` there (the stale alert says "none within max_age"). null: read on. Judged backup
 * by backup, so a walk of all apps and a read of one app stop at the same backup of that app.
 */
export function settledBy(
  seen: BackupsSeen,
  last: NewestBackup,
  horizon: number,
  history = 0,
): 'good' | 'max_age' | null {
  if (seen.good) return (seen.previous?.length ?? 0) >= history ? 'good' : null;
  const at = parseTime(last.taken_at);
  if (seen.finished === undefined || at === null || at >= horizon) return null;
  seen.stopped = 'max_age';
  return 'max_age';
}
