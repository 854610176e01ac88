/**
 * The `alert_context` table's SQL (migration 007), prepared once per open {@link Store}: one row
 * per run asked about, pending until its context is read, then ready. Row ⇄ object mapping lives
 * here and nowhere else; what to ask is the cycle stage's (`context-stage.ts`), reading the
 * reader's (`context-reader.ts`).
 */
import type { RunContextAsk } from '../detectors/run-context.js';
import type { AlertContext, Subject } from '../lib/alert-vocabulary.js';
import type { Store } from '../state/store.js';
import { prepareAll, sql, type Prepared } from '../state/prepare-all.js';
import { camelRow } from '../state/camel-row.js';

/** One run asked about, as the code sees it (times in ms since the epoch). */
export interface ContextRow {
  /** `run/5981`: what the context is of (see {@link contextKey}). */
  subject: string;
  /** The alert that asked first. */
  fingerprint: string;
  ask: RunContextAsk;
  status: 'pending' | 'ready';
  /** What was read; null while pending. */
  context: AlertContext | null;
  requestedAt: number;
  readAt: number | null;
}

/** The columns a {@link ContextRow} is read from (`updated_at` is the retention's). */
const READ = 'subject, fingerprint, ask, status, context, requested_at, read_at';

/** The key of an alert's context: its subject, `run/5981`; null for an alert about no one record. */
export function contextKey(subject: Subject | null | undefined): string | null {
  return subject?.id === undefined ? null : `${subject.type}/${subject.id}`;
}

/** The SQL of `alert_context`, prepared once per store ({@link ContextStore}). */
const SQL = {
  insert: sql<{
    subject: string;
    fingerprint: string;
    ask: string;
    now: number;
  }>(`INSERT INTO alert_context (subject, fingerprint, ask, status, requested_at, updated_at)
     VALUES (@subject, @fingerprint, @ask, 'pending', @now, @now) ON CONFLICT (subject) DO NOTHING`),
  get: sql<[string], Record<string, unknown>>(`SELECT ${READ} FROM alert_context WHERE subject = ?`),
  // Oldest first, and among the asks of one cycle (a storm's) the worst alert's first: the wait
  // for context (notify.context.wait) ends for all of them alike, so production's critical lines
  // get their step before staging's warnings do.
  pending: sql<[number], Record<string, unknown>>(
    `SELECT c.subject, c.fingerprint, c.ask, c.status, c.context, c.requested_at, c.read_at
     FROM alert_context c LEFT JOIN alerts a ON a.fingerprint = c.fingerprint WHERE c.status = 'pending'
     ORDER BY c.requested_at, CASE a.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, c.subject
     LIMIT ?`,
  ),
  ready: sql<{
    subject: string;
    now: number;
    context: string;
  }>(`UPDATE alert_context SET status = 'ready', context = @context, read_at = @now, updated_at = @now
     WHERE subject = @subject AND status = 'pending'`),
};

/** The prepared statements of `alert_context` for one open store. */
export class ContextStore {
  readonly #sql: Prepared<typeof SQL>;

  constructor(readonly store: Store) {
    this.#sql = prepareAll(store.db, SQL);
  }

  /** Records an ask for a run that has none yet (pending or read): true when it is new. */
  ask(subject: string, fingerprint: string, ask: RunContextAsk, now: number): boolean {
    return this.#sql.insert.run({ subject, fingerprint, ask: JSON.stringify(ask), now }).changes > 0;
  }

  /** The row of a subject, if one was asked for. */
  get(subject: string): ContextRow | undefined {
    const row = this.#sql.get.get(subject);
    return row && fromDb(row);
  }

  /** Pending asks, oldest first, at most `limit`. */
  pending(limit: number): ContextRow[] {
    return this.#sql.pending.all(limit).map(fromDb);
  }

  /** Stores what was read for a pending ask; a row already ready is left as it is. */
  ready(subject: string, context: AlertContext, now: number): void {
    this.#sql.ready.run({ subject, now, context: JSON.stringify(context) });
  }
}

/** A row as stored ({@link READ}): its ask and context are JSON; a status it does not know is pending. */
function fromDb(row: Record<string, unknown>): ContextRow {
  return {
    ...camelRow<ContextRow>(row, { json: ['ask', 'context'] }),
    status: row.status === 'ready' ? 'ready' : 'pending',
  };
}
