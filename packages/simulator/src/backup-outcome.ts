/**
 * How the backups the service makes from now on end, after their run is done: a mode, since the
 * reference leaves it open (§2 says a backup has `verified`, "the archive was checked after it was
 * made", and off-site copies with their transfer's state, not when either happens or how often
 * they fail). By default a backup is verified and copied off-site the moment its run is done; a
 * mode may leave it unverified, fail its off-site copy, and make both wait `settleMs` after the run
 * (unverified, the copy uploading, meanwhile), so a client that reads the backup back (`backups.get`)
 * is tested on each.
 */
import type { BackupRec, OffsiteRec } from './sim-state.js';
import { VOCABULARY } from './vocabulary.js';

/** How the next backups end. */
export interface BackupOutcome {
  /** `verified` (the default), `unverified` (never checked), or `offsite_failed` (verified, its copy failed). */
  result: BackupResult;
  /** How long after its run is done the backup takes that result (unverified, uploading meanwhile); default 0. */
  settleMs: number;
}

/** The results a backup can settle into. */
export const BACKUP_RESULTS = ['verified', 'unverified', 'offsite_failed'] as const;

/** One of {@link BACKUP_RESULTS}. */
export type BackupResult = (typeof BACKUP_RESULTS)[number];

/** The error an off-site copy failed with under `offsite_failed`. */
export const OFFSITE_FAILURE = 'upload failed: storage quota exceeded';

/** Checks a mode given from outside (a control call, the command line). */
export function checkBackupOutcome(spec: Partial<BackupOutcome>): BackupOutcome {
  const result = spec.result ?? 'verified';
  if (!(BACKUP_RESULTS as readonly string[]).includes(result))
    throw new Error(`backup result must be one of ${BACKUP_RESULTS.join(', ')}, got ${JSON.stringify(result)}`);
  const settleMs = spec.settleMs ?? 0;
  if (!Number.isFinite(settleMs) || settleMs < 0) throw new Error(`settleMs must be 0 or more, got ${settleMs}`);
  return { result, settleMs };
}

/** Backups of done runs waiting to settle, and the mode they settle by. */
export class BackupSettling {
  outcome: BackupOutcome = { result: 'verified', settleMs: 0 };
  readonly #due = new Map<number, { at: number; result: BackupResult }>();

  /** A backup's run is done at `at`: it settles now, or later (unverified and uploading meanwhile). */
  done(backup: BackupRec, storage: string, at: number): void {
    const { result, settleMs } = this.outcome;
    if (settleMs <= 0) return settle(backup, storage, result, at);
    backup.verified = false;
    backup.offsite = [{ ...copy(storage), onStorage: false, state: VOCABULARY.offsite.uploading }];
    this.#due.set(backup.id, { at: at + settleMs, result });
  }

  /** Settles every backup due by `now`; `find` gives a backup and its storage by id. */
  tick(now: number, find: (id: number) => { backup: BackupRec; storage: string } | undefined): void {
    for (const [id, due] of this.#due) {
      if (due.at > now) continue;
      this.#due.delete(id);
      const found = find(id);
      if (found) settle(found.backup, found.storage, due.result, due.at);
    }
  }
}

function copy(storage: string): OffsiteRec {
  return { storage, type: 's3', onStorage: true, state: VOCABULARY.offsite.uploaded, uploadedAt: null, error: null };
}

function settle(backup: BackupRec, storage: string, result: BackupResult, at: number): void {
  backup.verified = result !== 'unverified';
  backup.offsite = [
    result === 'offsite_failed'
      ? { ...copy(storage), onStorage: false, state: VOCABULARY.offsite.failed, error: OFFSITE_FAILURE }
      : { ...copy(storage), uploadedAt: at },
  ];
}
