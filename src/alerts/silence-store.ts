/**
 * The `silences` table's SQL (migrations 002 and 007), and nothing else: row ⇄ object mapping for
 * the silences `src/alerts/silences.ts` makes, lists and ends. What a silence means (its state at a
 * moment, what it mutes) lives there.
 */
import type { LabelMatcher } from './matchers.js';
import type { Store } from '../state/store.js';
import { camelRow } from '../state/camel-row.js';

/** A silence as stored; times in ms since the epoch. */
export interface StoredSilence {
  id: string;
  matchers: LabelMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  reason: string;
  createdAt: number;
  expiredAt: number | null;
  expiredBy: string | null;
  expireReason: string | null;
}

const COLUMNS =
  'id, matchers, starts_at, ends_at, created_by, reason, created_at, expired_at, expired_by, expire_reason';

/** The silences of one open store. Statements are prepared per call: silences are few and rarely written. */
export class SilenceStore {
  constructor(readonly store: Store) {}

  /** Writes a new silence; false when its id is taken (the caller draws another). */
  insert(s: StoredSilence): boolean {
    const info = this.store.db
      .prepare(
        `INSERT INTO silences (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL) ON CONFLICT (id) DO NOTHING`,
      )
      .run(s.id, JSON.stringify(s.matchers), s.startsAt, s.endsAt, s.createdBy, s.reason, s.createdAt);
    return info.changes > 0;
  }

  /** Silences not over at `now` (in force, or starting later), soonest end first. */
  notOver(now: number): StoredSilence[] {
    return this.#all(`WHERE expired_at IS NULL AND ends_at > ? ORDER BY ends_at, id`, now);
  }

  /** Every stored silence, newest first. */
  every(): StoredSilence[] {
    return this.#all('ORDER BY created_at DESC, id');
  }

  /**
   * Silences in force at some moment of [from, to): started before `to`, and neither over nor ended
   * by hand by `from`; earliest start first.
   */
  inForceDuring(from: number, to: number): StoredSilence[] {
    return this.#all(
      `WHERE starts_at < ? AND ends_at > ? AND (expired_at IS NULL OR (expired_at > ? AND expired_at > starts_at))
       ORDER BY starts_at, id`,
      to,
      from,
      from,
    );
  }

  /** One silence by its (lowercase) id. */
  get(id: string): StoredSilence | undefined {
    return this.#all('WHERE id = ?', id)[0];
  }

  /** Records that a silence was ended by hand at `now`, by whom and why (null: not said). */
  expire(id: string, now: number, by: string | null, reason: string | null): void {
    this.store.db
      .prepare('UPDATE silences SET expired_at = ?, expired_by = ?, expire_reason = ? WHERE id = ?')
      .run(now, by, reason, id);
  }

  /** The silences a query's `tail` selects, as stored: their matchers are JSON. */
  #all(tail: string, ...params: (number | string)[]): StoredSilence[] {
    return this.store.db
      .prepare<unknown[], Record<string, unknown>>(`SELECT ${COLUMNS} FROM silences ${tail}`)
      .all(...params)
      .map((row) => camelRow<StoredSilence>(row, { json: ['matchers'] }));
  }
}
