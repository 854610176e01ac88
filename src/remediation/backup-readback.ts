/**
 * Reading back a backup we took (`apps.backup`, automatic or asked for): once its run succeeded,
 * the backup is read by id (`backups.get`) until it settles, for at most the policy's `readback`,
 * and the outcome says whether it was verified and copied off-site. A backup has settled when it
 * failed, or when it is verified and every off-site copy either is stored or failed; what has not
 * settled by the end of the window is said as it stands ("not verified within 30m"). The reference
 * says neither when verification happens nor when copies upload (§2: `verified`, `offsite[]`), so
 * both are waited for, never assumed.
 */
import type { ApiClient } from '../api/client.js';
import type { Backup } from '../api/schemas.js';
import { judgeOffsite, type BackupsConfig } from '../detectors/backups.js';
import { formatDuration } from '../lib/format-duration.js';
import type { AttemptFacts } from './actions/action.js';
import { madeSinceFirstSend } from './actions/app-run-since.js';

/** The backup state words the judgement needs: the backups check's (`checks.backups`), its off-site failures too. */
export type BackupWords = Pick<BackupsConfig, 'succeeded_states' | 'failed_states' | 'offsite_failed_states'>;

/** Where one off-site copy stands. */
export interface OffsiteCopyState {
  storage: string;
  state: 'stored' | 'failed' | 'pending';
  /** Why its transfer failed, when the service says. */
  error: string | null;
}

/** What a read of the backup showed. */
export interface BackupReading extends Pick<Backup, 'id' | 'name' | 'state' | 'verified'> {
  /** The backup's state is one of the failed words. */
  failed: boolean;
  copies: OffsiteCopyState[];
  /** Nothing more will change that the outcome would say. */
  settled: boolean;
}

/** How the reading is told, as the attempt's outcome word. */
export type ReadbackWord =
  'succeeded' | 'backup_failed' | 'backup_offsite_failed' | 'backup_unverified' | 'backup_not_offsite';

/** Judges one read of the backup. Pure. */
export function readBackup(backup: Backup, words: BackupWords): BackupReading {
  const copies = backup.offsite.map((copy): OffsiteCopyState => {
    const problem = judgeOffsite(copy, words.offsite_failed_states);
    const state = problem !== null ? 'failed' : copy.on_storage && copy.uploaded_at !== null ? 'stored' : 'pending';
    return { storage: copy.storage, state, error: copy.error };
  });
  const failed = backup.state !== null && words.failed_states.includes(backup.state);
  const done = backup.state !== null && words.succeeded_states.includes(backup.state);
  const settled =
    failed || (done && backup.verified && copies.length > 0 && copies.every((c) => c.state !== 'pending'));
  return { id: backup.id, name: backup.name, state: backup.state, failed, verified: backup.verified, copies, settled };
}

/** The outcome word of a reading: the worst thing it says, or `succeeded` when all is well. */
export function readbackWord(r: BackupReading): ReadbackWord {
  if (r.failed) return 'backup_failed';
  if (r.copies.some((c) => c.state === 'failed')) return 'backup_offsite_failed';
  if (!r.verified) return 'backup_unverified';
  if (r.copies.length === 0 || r.copies.some((c) => c.state === 'pending')) return 'backup_not_offsite';
  return 'succeeded';
}

/**
 * What the reading says, after `done` ("Backup taken automatically"): "shop-2026-11-01.zip (#812):
 * verified; copied off-site to s3-eu". `windowMs` is how long it was waited for (unsettled parts say it).
 */
export function readbackText(done: string, failed: string, r: BackupReading, windowMs: number): string {
  const backup = `${r.name} (#${r.id})`;
  if (r.failed) return `${failed}: backup ${backup} ended ${r.state ?? 'failed'}`;
  const within = r.settled ? '' : ` within ${formatDuration(windowMs, 'exact')}`;
  const verified = r.verified ? 'verified' : `not verified${within}`;
  const stored = r.copies.filter((c) => c.state === 'stored').map((c) => c.storage);
  const parts = [
    ...(stored.length > 0 ? [`copied off-site to ${stored.join(', ')}`] : []),
    ...r.copies
      .filter((c) => c.state === 'failed')
      .map((c) => `off-site copy to ${c.storage} failed${c.error ? `: ${c.error}` : ''}`),
    ...r.copies.filter((c) => c.state === 'pending').map((c) => `off-site copy to ${c.storage} not uploaded${within}`),
    ...(r.copies.length === 0 ? [`no off-site copy${within}`] : []),
  ];
  return `${done}: backup ${backup} ${verified}; ${parts.join('; ')}`;
}

/**
 * The backup a change made, when its answer named none (or was lost): the newest backup of the app
 * taken since the first send; null when there is none.
 */
export async function findTakenBackup(
  client: ApiClient,
  facts: AttemptFacts,
  signal?: AbortSignal,
): Promise<number | null> {
  const page = await client.backups.list({ app_id: facts.recordId, limit: 10 }, signal ? { signal } : {});
  return madeSinceFirstSend(facts, page.items, (b) => b.taken_at);
}
