/**
 * Whether each job can read its source: the `source_health` table (migration 001), one row per
 * collector job counting its consecutive failed cycles, and whether it is disabled (a permission
 * missing). Row ⇄ object mapping lives here and nowhere else; the findings made of it are in
 * `source-health.ts`.
 */
import type { SqlStatement } from '../state/sql-database.js';
import type { Store } from '../state/store.js';
import { camelRow } from '../state/camel-row.js';

/** One row of `source_health`. */
export interface SourceHealthRow {
  job: string;
  consecutiveFailures: number;
  lastError: string | null;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  disabledReason: string | null;
}

/** The `source_health` table, statements prepared once per store. */
export class SourceHealthStore {
  readonly #success: SqlStatement<[string, number, number]>;
  readonly #failure: SqlStatement<[string, string, number]>;
  readonly #disable: SqlStatement<[string, string, number]>;
  readonly #enableAll: SqlStatement<[]>;
  readonly #get: SqlStatement<[string], Record<string, unknown>>;

  constructor(readonly store: Store) {
    const db = store.db;
    this.#success = db.prepare(
      `INSERT INTO source_health (job, consecutive_failures, last_error, last_attempt_at, last_success_at, disabled_reason)
       VALUES (?, 0, NULL, ?, ?, NULL)
       ON CONFLICT (job) DO UPDATE SET consecutive_failures = 0, last_error = NULL,
         last_attempt_at = excluded.last_attempt_at, last_success_at = excluded.last_success_at, disabled_reason = NULL`,
    );
    this.#failure = db.prepare(
      `INSERT INTO source_health (job, consecutive_failures, last_error, last_attempt_at)
       VALUES (?, 1, ?, ?)
       ON CONFLICT (job) DO UPDATE SET consecutive_failures = source_health.consecutive_failures + 1,
         last_error = excluded.last_error, last_attempt_at = excluded.last_attempt_at`,
    );
    this.#disable = db.prepare(
      `INSERT INTO source_health (job, disabled_reason, last_attempt_at) VALUES (?, ?, ?)
       ON CONFLICT (job) DO UPDATE SET disabled_reason = excluded.disabled_reason, last_attempt_at = excluded.last_attempt_at`,
    );
    this.#enableAll = db.prepare('UPDATE source_health SET disabled_reason = NULL WHERE disabled_reason IS NOT NULL');
    this.#get = db.prepare<[string], Record<string, unknown>>('SELECT * FROM source_health WHERE job = ?');
  }

  /** A complete snapshot was read: the failure count starts again from zero. */
  recordSuccess(job: string, now: number): void {
    this.#success.run(job, now, now);
  }

  /** A cycle failed; returns the row after it (with the consecutive failure count). */
  recordFailure(job: string, reason: string, now: number): SourceHealthRow {
    this.#failure.run(job, reason, now);
    return this.get(job)!;
  }

  /** The job stops running until the next start or reload. */
  disable(job: string, reason: string, now: number): void {
    this.#disable.run(job, reason, now);
  }

  /** A start or reload gives every disabled job another chance (the token may have been fixed). */
  enableAll(): void {
    this.#enableAll.run();
  }

  /** The job's row, if it ever ran. */
  get(job: string): SourceHealthRow | undefined {
    const r = this.#get.get(job);
    return r && camelRow<SourceHealthRow>(r);
  }
}
