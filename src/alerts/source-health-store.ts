/**
 * Whether each job can read its source: the `source_health` table (migration 001), one row per
 * collector job counting its consecutive failed cycles, and whether it is disabled (a permission
 * missing). Row ⇄ object mapping lives here and nowhere else; the findings made of it are in
 * `source-health.ts`.
 */
import type { Store } from '../state/store.js';
import { camelRow } from '../state/camel-row.js';
import { prepareAll, sql, type Prepared } from '../state/prepare-all.js';

/** One row of `source_health`. */
export interface SourceHealthRow {
  job: string;
  consecutiveFailures: number;
  lastError: string | null;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  disabledReason: string | null;
}

/** The SQL of `source_health`, prepared once per store ({@link SourceHealthStore}). */
const SQL = {
  success: sql<
    [string, number, number]
  >(`INSERT INTO source_health (job, consecutive_failures, last_error, last_attempt_at, last_success_at, disabled_reason)
     VALUES (?, 0, NULL, ?, ?, NULL)
     ON CONFLICT (job) DO UPDATE SET consecutive_failures = 0, last_error = NULL,
       last_attempt_at = excluded.last_attempt_at, last_success_at = excluded.last_success_at, disabled_reason = NULL`),
  failure: sql<
    [string, string, number]
  >(`INSERT INTO source_health (job, consecutive_failures, last_error, last_attempt_at)
     VALUES (?, 1, ?, ?)
     ON CONFLICT (job) DO UPDATE SET consecutive_failures = source_health.consecutive_failures + 1,
       last_error = excluded.last_error, last_attempt_at = excluded.last_attempt_at`),
  disable: sql<
    [string, string, number]
  >(`INSERT INTO source_health (job, disabled_reason, last_attempt_at) VALUES (?, ?, ?)
     ON CONFLICT (job) DO UPDATE SET disabled_reason = excluded.disabled_reason, last_attempt_at = excluded.last_attempt_at`),
  enableAll: sql<[]>('UPDATE source_health SET disabled_reason = NULL WHERE disabled_reason IS NOT NULL'),
  get: sql<[string], Record<string, unknown>>('SELECT * FROM source_health WHERE job = ?'),
};

/** The `source_health` table, statements prepared once per store. */
export class SourceHealthStore {
  readonly #sql: Prepared<typeof SQL>;

  constructor(readonly store: Store) {
    this.#sql = prepareAll(store.db, SQL);
  }

  /** A complete snapshot was read: the failure count starts again from zero. */
  recordSuccess(job: string, now: number): void {
    this.#sql.success.run(job, now, now);
  }

  /** A cycle failed; returns the row after it (with the consecutive failure count). */
  recordFailure(job: string, reason: string, now: number): SourceHealthRow {
    this.#sql.failure.run(job, reason, now);
    return this.get(job)!;
  }

  /** The job stops running until the next start or reload. */
  disable(job: string, reason: string, now: number): void {
    this.#sql.disable.run(job, reason, now);
  }

  /** A start or reload gives every disabled job another chance (the token may have been fixed). */
  enableAll(): void {
    this.#sql.enableAll.run();
  }

  /** The job's row, if it ever ran. */
  get(job: string): SourceHealthRow | undefined {
    const r = this.#sql.get.get(job);
    return r && camelRow<SourceHealthRow>(r);
  }
}
