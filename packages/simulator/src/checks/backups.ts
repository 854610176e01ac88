/** The backups check's staging: old, unverified and failed-off-site backups, and how new ones end. */
import type { App, Backup } from '../../../../src/api/schemas.js';
import { checkBackupOutcome, type BackupOutcome } from '../backup-outcome.js';
import type { BackupRec, OffsiteRec } from '../sim-state.js';
import { VOCABULARY } from '../vocabulary.js';
import { HOUR, type StageContext } from './stage-context.js';

/** Options of `checks.backups.add`. */
export interface AddBackupOptions {
  hoursAgo?: number;
  verified?: boolean;
  state?: string;
  format?: 'zip' | 'dump';
  automated?: boolean;
  offsiteError?: string;
  /** Its size; default the app's newest backup's (512 MB for the first). */
  sizeMb?: number;
  /** `none`: no off-site copy at all; `uploading`: a copy whose upload has not ended (no `uploaded_at`). */
  offsite?: 'none' | 'uploading';
}

/** Staging operations of the backups check (`control.checks.backups`). */
export function backupsStaging(sim: StageContext) {
  const failedCopy = (backup: BackupRec, error: string): OffsiteRec => ({
    storage: sim.core.state.namespace(backup.nsId).storage,
    type: 's3',
    onStorage: false,
    state: VOCABULARY.offsite.failed,
    uploadedAt: null,
    error,
  });
  return {
    /** Shifts an app's backups back so the newest finished one is `hours` old; last_backup_at and backup_health follow. */
    age(appId: number, options: { hours: number }): App {
      const now = sim.now();
      const app = sim.app(appId);
      const newest = sim.core.views.newestDoneBackup(app.id);
      if (newest) {
        const delta = now - options.hours * HOUR - newest.takenAt;
        for (const b of [...sim.core.state.backupIndex.byApp(app.id)]) {
          sim.core.state.backupIndex.reposition(b, (rec) => {
            rec.takenAt += delta;
            for (const o of rec.offsite ?? []) if (o.uploadedAt !== null) o.uploadedAt += delta;
          });
        }
      }
      return sim.core.views.app(app, now);
    },

    /** Adds a backup to an app (default: finished now, verified, copied off-site). */
    add(appId: number, options: AddBackupOptions = {}): Backup {
      const now = sim.now();
      const app = sim.app(appId);
      const state = sim.core.state;
      const backup: BackupRec = {
        id: state.nextId('backup'),
        appId: app.id,
        nsId: app.nsId,
        takenAt: now - (options.hoursAgo ?? 0) * HOUR,
        format: options.format ?? 'zip',
        sizeMb: options.sizeMb ?? state.backupIndex.byApp(app.id)[0]?.sizeMb ?? 512,
        automated: options.automated ?? false,
        state: options.state ?? VOCABULARY.backup.done,
        verified: options.verified ?? true,
        offsite: null,
      };
      if (options.offsiteError) backup.offsite = [failedCopy(backup, options.offsiteError)];
      else if (options.offsite === 'none') backup.offsite = [];
      else if (options.offsite === 'uploading')
        backup.offsite = [{ ...failedCopy(backup, ''), state: VOCABULARY.offsite.uploading, error: null }];
      state.backups.set(backup.id, backup);
      state.backupIndex.add(backup);
      return sim.core.views.backup(backup, now);
    },

    /** The off-site copy of a backup failed to upload. */
    failOffsite(backupId: number, error: string): Backup {
      const now = sim.now();
      const backup = sim.backup(backupId);
      backup.offsite = [failedCopy(backup, error)];
      return sim.core.views.backup(backup, now);
    },

    /** Removes a backup from the server (`on_server` false): only its off-site copies are left, if any. */
    removeFromServer(backupId: number): Backup {
      const now = sim.now();
      const backup = sim.backup(backupId);
      backup.offServer = true;
      return sim.core.views.backup(backup, now);
    },

    /** Marks a backup verified or not. */
    setVerified(backupId: number, verified: boolean): Backup {
      const now = sim.now();
      const backup = sim.backup(backupId);
      backup.verified = verified;
      return sim.core.views.backup(backup, now);
    },

    /**
     * How the backups made from now on end after their run is done (`backup-outcome.ts`): verified
     * and copied off-site (the default), left unverified, or their off-site copy failed; at once, or
     * `settleMs` later.
     */
    setOutcome(spec: Partial<BackupOutcome>): BackupOutcome {
      sim.now();
      sim.core.engine.backupSettling.outcome = checkBackupOutcome(spec);
      return sim.core.engine.backupSettling.outcome;
    },
  };
}
