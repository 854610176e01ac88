import type { Store } from './store.js';

/** One table's prune rule: rows matching `where` (with `@cutoff` in ms) are old enough to go. */
interface PruneRule {
  table: string;
  /** Columns the rule reads; a table without them is skipped rather than failing the prune. */
  columns: readonly string[];
  where: string;
  /** Other tables the rule's `where` reads, with their columns; missing ones skip the rule too. */
  reads?: readonly { table: string; columns: readonly string[] }[];
  /** Why these rows, and only these, may go. */
  why: string;
}

/** The rule of a table whose rows go once `column` (a time in ms) is older than the cutoff. */
function olderThan(table: string, column: string, why: string): PruneRule {
  return { table, columns: [column], where: `${column} < @cutoff`, why };
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
    table: 'outbox_bodies',
    columns: ['body_id', 'stored_at'],
    where: 'stored_at < @cutoff AND NOT EXISTS (SELECT 1 FROM outbox WHERE outbox.body_id = outbox_bodies.body_id)',
    reads: [{ table: 'outbox', columns: ['body_id'] }],
    why: 'what notifications said, once no outbox row names it any more',
  },
  {
    table: 'notification_log',
    columns: ['last_kind', 'announced_at', 'last_sent_at'],
    where: `last_kind = 'resolved' AND COALESCE(last_sent_at, announced_at) < @cutoff`,
    why: 'what a channel was told of alerts long resolved; a firing one must stay, or its resolve would be lost',
  },
  olderThan('notify_digest_log', 'created_at', 'which days got a digest; only today matters for "never twice"'),
  {
    table: 'alert_context',
    columns: ['fingerprint', 'updated_at'],
    where: `updated_at < @cutoff AND NOT EXISTS (
        SELECT 1 FROM alerts WHERE alerts.fingerprint = alert_context.fingerprint AND alerts.status <> 'resolved')`,
    reads: [{ table: 'alerts', columns: ['fingerprint', 'status'] }],
    why: 'what the API told about alerts no longer open; an open alert keeps its context for its repeats',
  },
  {
    table: 'slack_app_message_alerts',
    columns: ['message_id'],
    where: `message_id IN (SELECT id FROM slack_app_messages WHERE updated_at < @cutoff)`,
    reads: [{ table: 'slack_app_messages', columns: ['id', 'updated_at'] }],
    why: 'what the Slack living messages untouched for the whole retention showed (their own rows go next)',
  },
  olderThan(
    'slack_app_messages',
    'updated_at',
    'Slack living messages untouched for the whole retention: closed ones, and open ones no event has reached ' +
      "since (their alerts ended without a resolve this channel was sent); the group's next event posts a new one",
  ),
  olderThan(
    'slack_interactions',
    'at',
    'the audit of clicks on Slack buttons; what they did is also where it was done (events, silences, remediation audit)',
  ),
  olderThan('time_to_alert', 'delivered_at', 'how soon each problem was told; the console reads only the recent ones'),
  {
    table: 'events',
    columns: ['at', 'id', 'fingerprint', 'kind'],
    where: `at < @cutoff AND NOT (
        kind IN ('firing', 'repeat', 'escalated')
        AND EXISTS (SELECT 1 FROM alerts WHERE alerts.fingerprint = events.fingerprint AND alerts.status <> 'resolved')
        AND id = (SELECT MAX(news.id) FROM events AS news
          WHERE news.fingerprint = events.fingerprint AND news.kind IN ('firing', 'repeat', 'escalated')))`,
    reads: [{ table: 'alerts', columns: ['fingerprint', 'status'] }],
    why:
      'the history of alert changes; an open alert keeps its latest firing, repeat or escalated event, which its ' +
      'escalation names (an alert silenced or acknowledged longer than the retention writes no repeat)',
  },
  {
    table: 'unrouted_events',
    columns: ['event_id'],
    where: 'NOT EXISTS (SELECT 1 FROM events WHERE events.id = unrouted_events.event_id)',
    reads: [{ table: 'events', columns: ['id'] }],
    why: 'acknowledgements never routed (no daemon ran) whose event is pruned: there is nothing left to say',
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
  olderThan('remediation_audit', 'at', 'the audit trail of remediation attempts'),
  {
    table: 'remediation_attempts',
    columns: ['policy', 'record_type', 'record_id', 'fingerprint', 'status', 'planned_at', 'finished_at'],
    where: `NOT EXISTS (
        SELECT 1 FROM remediation_attempts AS o
        WHERE o.policy = remediation_attempts.policy AND o.record_type = remediation_attempts.record_type
          AND o.record_id = remediation_attempts.record_id
          AND (o.status <> 'finished' OR COALESCE(o.finished_at, o.planned_at) >= @cutoff))
      AND NOT EXISTS (
        SELECT 1 FROM alerts WHERE alerts.fingerprint = remediation_attempts.fingerprint AND alerts.status <> 'resolved')`,
    reads: [{ table: 'alerts', columns: ['fingerprint', 'status'] }],
    why:
      'whole attempt sequences (policy and record) only, once every attempt of it finished before the cutoff and its ' +
      'alert is no longer open: an unfinished attempt is never dropped (its key must be re-sent as it is), and ' +
      'max_attempts keeps counting while the problem lasts',
  },
  olderThan(
    'remediation_skip_state',
    'at',
    'the last skip reason written per policy and record; forgetting it costs at most one repeated audit row',
  ),
];

/** Why a table cannot serve a rule (missing, or lacking a column), or null when it can. */
function unusable(store: Store, table: string, wanted: readonly string[], other: boolean): string | null {
  const columns = store.db.tableColumns(table);
  if (!columns) return other ? `table ${table} does not exist` : 'table does not exist';
  const missing = wanted.filter((c) => !columns.has(c));
  if (missing.length === 0) return null;
  return `missing column(s) ${missing.map((c) => (other ? `${table}.${c}` : c)).join(', ')}`;
}

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
  /** Pages returned to the file system by SQLite's `PRAGMA incremental_vacuum` (0 on PostgreSQL: its autovacuum does that). */
  freedPages: number;
}

/**
 * Deletes rows older than the retention from every table that has a prune rule and exists (so it
 * runs before later migrations are applied), in one transaction; then gives free pages back and
 * truncates the WAL (SQLite). Never touches a firing alert, an undelivered outbox row or an unfinished
 * remediation attempt.
 */
export function pruneState(store: Store, options: PruneOptions): PruneResult {
  const cutoff = options.now - options.retentionMs;
  const result: PruneResult = { deleted: {}, skipped: {}, freedPages: 0 };
  const db = store.db;
  store.transaction(() => {
    for (const rule of PRUNE_RULES) {
      const problem = [{ table: rule.table, columns: rule.columns }, ...(rule.reads ?? [])]
        .map((read) => unusable(store, read.table, read.columns, read.table !== rule.table))
        .find((p) => p !== null);
      if (problem) {
        result.skipped[rule.table] = problem;
        continue;
      }
      result.deleted[rule.table] = db.prepare(`DELETE FROM ${rule.table} WHERE ${rule.where}`).run({ cutoff }).changes;
    }
  });
  result.freedPages = db.reclaimSpace();
  return result;
}
