import type { Store } from './store.js';

/** One table's prune rule: rows matching `where` (with `@cutoff` in ms) are old enough to go. */
interface PruneRule {
  table: string;
  /** Columns the rule reads; a table without them is skipped rather than failing the prune. */
  columns: readonly string[];
  where: string;
  /** Why these rows, and only these, may go. */
  why: string;
}

/**
 * Every prune rule, in deletion order: rows that may reference others go first, so foreign keys
 * from outbox → events → alerts never block a delete.
 */
const PRUNE_RULES: readonly PruneRule[] = [
  {
    table: 'outbox',
    columns: ['status', 'created_at'],
    where: `status IN ('sent', 'suppressed', 'expired') AND created_at < @cutoff`,
    why: 'finished rows only; a pending or held row is never dropped, however old',
  },
  {
    table: 'notification_log',
    columns: ['last_kind', 'announced_at', 'last_sent_at'],
    where: `last_kind = 'resolved' AND COALESCE(last_sent_at, announced_at) < @cutoff`,
    why: 'what a channel was told of alerts long resolved; a firing one must stay, or its resolve would be lost',
  },
  {
    table: 'notify_digest_log',
    columns: ['created_at'],
    where: 'created_at < @cutoff',
    why: 'which days got a digest; only today matters for "never twice"',
  },
  {
    table: 'events',
    columns: ['at'],
    where: 'at < @cutoff',
    why: 'the history of alert changes',
  },
  {
    table: 'alerts',
    columns: ['status', 'resolved_at'],
    where: `status = 'resolved' AND resolved_at < @cutoff`,
    why: 'resolved alerts only; a firing alert stays whatever its age, or it would be re-announced',
  },
  {
    table: 'silences',
    columns: ['ends_at', 'expired_at'],
    where: 'ends_at < @cutoff OR expired_at < @cutoff',
    why: 'silences over (ended, or expired by hand) for longer than the retention',
  },
  {
    table: 'remediation_audit',
    columns: ['at'],
    where: 'at < @cutoff',
    why: 'the audit trail of remediation attempts',
  },
];

/** Options of {@link pruneState}. */
export interface PruneOptions {
  /** The current time (ms since the epoch), from the caller's clock. */
  now: number;
  /** Rows older than this many ms are deleted. */
  retentionMs: number;
}

/** What {@link pruneState} did. */
export interface PruneResult {
  /** Rows deleted per table (tables that exist and have the rule's columns). */
  deleted: Record<string, number>;
  /** Tables with a rule that were skipped, and why (not created yet, or a column is missing). */
  skipped: Record<string, string>;
  /** Pages returned to the file system by `PRAGMA incremental_vacuum`. */
  freedPages: number;
}

/**
 * Deletes rows older than the retention from every table that has a prune rule and exists (so it
 * runs before later migrations are applied), in one transaction; then gives free pages back and
 * truncates the WAL. Never touches a firing alert or an undelivered outbox row.
 */
export function pruneState(store: Store, options: PruneOptions): PruneResult {
  const cutoff = options.now - options.retentionMs;
  const result: PruneResult = { deleted: {}, skipped: {}, freedPages: 0 };
  const db = store.db;
  store.transaction(() => {
    for (const rule of PRUNE_RULES) {
      const exists = db
        .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`)
        .get(rule.table);
      if (!exists) {
        result.skipped[rule.table] = 'table does not exist';
        continue;
      }
      const columns = new Set(
        (db.pragma(`table_info(${rule.table})`) as { name: string }[]).map((c) => c.name),
      );
      const missing = rule.columns.filter((c) => !columns.has(c));
      if (missing.length > 0) {
        result.skipped[rule.table] = `missing column(s) ${missing.join(', ')}`;
        continue;
      }
      result.deleted[rule.table] = db.prepare(`DELETE FROM ${rule.table} WHERE ${rule.where}`).run({ cutoff }).changes;
    }
  });
  const before = db.pragma('freelist_count', { simple: true }) as number;
  // Only has an effect with auto_vacuum=INCREMENTAL (set on files this code created).
  db.pragma('incremental_vacuum');
  const after = db.pragma('freelist_count', { simple: true }) as number;
  result.freedPages = Math.max(0, before - after);
  // Retention runs rarely and deletes a lot: fold the WAL back and shrink it to zero.
  db.pragma('wal_checkpoint(TRUNCATE)');
  return result;
}
