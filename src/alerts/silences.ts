/**
 * Silences: an operator's "stop telling me about alerts with these labels until then", stored in
 * SQLite so they survive restarts and are shared by the daemon and the CLI.
 *
 * A silence mutes DELIVERY only. The lifecycle still tracks a silenced alert (pending → firing →
 * resolved) exactly as any other; the notify router asks {@link activeSilenceFor} per event and
 * holds back what a silence covers, deciding it again every delivery round. So when a silence ends,
 * an alert still firing is announced once, and one that ended during the silence stays quiet.
 */
import { randomBytes } from 'node:crypto';
import type { Store } from '../state/store.js';
import { compileMatchers, formatMatcher, MatcherError, type LabelMatcher, type MatchableLabels } from './matchers.js';

/** One silence as stored; times in ms since the epoch. */
export interface Silence {
  /** 12 lowercase hex characters: typeable, and 48 random bits are not guessed by accident. */
  id: string;
  /** Every one must match for the silence to apply (at least one). */
  matchers: LabelMatcher[];
  startsAt: number;
  endsAt: number;
  createdBy: string;
  reason: string;
  createdAt: number;
  /** When it was ended by hand (`unsilence`, the console), before `endsAt`; null otherwise. */
  expiredAt: number | null;
  /** Who ended it by hand; null when it ran its course (or was ended before state version 7). */
  expiredBy: string | null;
  /** Why it was ended by hand, when they said. */
  expireReason: string | null;
  /**
   * Why its matchers cannot be run, when they cannot: a pattern stored before matchers ran on RE2
   * (a lookahead, a backreference). Such a silence mutes nothing; null for every other.
   */
  refused: string | null;
}

/** Where a silence is in its life at a given moment. */
export type SilenceState = 'active' | 'pending' | 'expired';

/** A silence that cannot be made as asked; the message says what was wrong. */
export class SilenceError extends Error {
  override name = 'SilenceError';
}

/** What {@link createSilence} needs. */
export interface NewSilence {
  matchers: readonly LabelMatcher[];
  durationMs: number;
  reason: string;
  createdBy: string;
  now: number;
}

const ID_BYTES = 6;
const COLUMNS =
  'id, matchers, starts_at, ends_at, created_by, reason, created_at, expired_at, expired_by, expire_reason';

/**
 * Stores a silence in force from `now` for `durationMs`. Throws {@link SilenceError} when there is
 * no matcher, the duration is not a positive finite number, or the reason or author is empty; a
 * matcher whose regex does not compile throws `MatcherError`. Nothing is stored then.
 */
export function createSilence(store: Store, input: NewSilence): Silence {
  if (input.matchers.length === 0) {
    throw new SilenceError('a silence needs at least one matcher (a silence of everything would hide every alert)');
  }
  compileMatchers(input.matchers);
  if (!Number.isFinite(input.durationMs) || input.durationMs <= 0) {
    throw new SilenceError(`the silence duration must be greater than zero, got ${input.durationMs} ms`);
  }
  const reason = input.reason.trim();
  if (!reason) throw new SilenceError('a silence needs a reason, so others know why alerts are muted');
  const createdBy = input.createdBy.trim();
  if (!createdBy) throw new SilenceError('a silence needs an author');

  const silence: Silence = {
    id: '',
    matchers: input.matchers.map(({ name, op, value }) => ({ name, op, value })),
    startsAt: input.now,
    endsAt: input.now + input.durationMs,
    createdBy,
    reason,
    createdAt: input.now,
    expiredAt: null,
    expiredBy: null,
    expireReason: null,
    refused: null,
  };
  const insert = store.db.prepare(
    `INSERT INTO silences (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL) ON CONFLICT (id) DO NOTHING`,
  );
  // A clash of 48 random bits is all but impossible; retrying costs nothing and makes it impossible.
  for (;;) {
    silence.id = randomBytes(ID_BYTES).toString('hex');
    const info = insert.run(
      silence.id,
      JSON.stringify(silence.matchers),
      silence.startsAt,
      silence.endsAt,
      silence.createdBy,
      silence.reason,
      silence.createdAt,
    );
    if (info.changes > 0) return silence;
  }
}

/**
 * Silences not over at `now` (active, or not yet started), soonest end first; with
 * `includeExpired`, every stored silence, newest first.
 */
export function listSilences(store: Store, options: { now: number; includeExpired?: boolean }): Silence[] {
  if (options.includeExpired) {
    const rows = store.db.prepare(`SELECT ${COLUMNS} FROM silences ORDER BY created_at DESC, id`).all() as DbSilence[];
    return rows.map(fromDb);
  }
  const rows = store.db
    .prepare(`SELECT ${COLUMNS} FROM silences WHERE expired_at IS NULL AND ends_at > ? ORDER BY ends_at, id`)
    .all(options.now) as DbSilence[];
  return rows.map(fromDb);
}

/** One silence by id (case-insensitive), in whatever state. */
export function getSilence(store: Store, id: string): Silence | undefined {
  const row = store.db.prepare(`SELECT ${COLUMNS} FROM silences WHERE id = ?`).get(id.trim().toLowerCase()) as
    DbSilence | undefined;
  return row ? fromDb(row) : undefined;
}

/** What {@link expireSilence} did, named. */
export type ExpireResult =
  { outcome: 'expired'; silence: Silence } | { outcome: 'already-over'; silence: Silence } | { outcome: 'unknown-id' };

/** Who ends a silence by hand, and why (the console requires the why; `unsilence` has none to give). */
export interface ExpiredBy {
  by: string;
  reason?: string | undefined;
}

/** Ends a silence by hand at `now`, recording who and why when told. A silence already over is left as it is. */
export function expireSilence(store: Store, id: string, now: number, who?: ExpiredBy): ExpireResult {
  const silence = getSilence(store, id);
  if (!silence) return { outcome: 'unknown-id' };
  if (silenceState(silence, now) === 'expired') return { outcome: 'already-over', silence };
  const expiredBy = who?.by.trim() || null;
  const expireReason = who?.reason?.trim() || null;
  store.db
    .prepare('UPDATE silences SET expired_at = ?, expired_by = ?, expire_reason = ? WHERE id = ?')
    .run(now, expiredBy, expireReason, silence.id);
  return { outcome: 'expired', silence: { ...silence, expiredAt: now, expiredBy, expireReason } };
}

/** Whether a silence is in force, not yet started, or over, at `now`. */
export function silenceState(silence: Silence, now: number): SilenceState {
  if (silence.expiredAt !== null && silence.expiredAt <= now) return 'expired';
  if (silence.endsAt <= now) return 'expired';
  if (silence.startsAt > now) return 'pending';
  return 'active';
}

/**
 * The "does a silence mute these labels now?" question the notify router asks per event: the
 * matching silence in force that ends last, or undefined. Pass the store, or a list loaded once
 * per delivery pass (`listSilences`) to ask many times without a query each.
 */
export function activeSilenceFor(
  source: Store | readonly Silence[],
  labels: MatchableLabels,
  now: number,
): Silence | undefined {
  const silences = Array.isArray(source) ? (source as readonly Silence[]) : listSilences(source as Store, { now });
  let best: Silence | undefined;
  for (const s of silences) {
    if (silenceState(s, now) !== 'active') continue;
    if (best && best.endsAt >= s.endsAt) continue;
    if (s.refused === null && compileMatchers(s.matchers)(labels)) best = s;
  }
  return best;
}

/** The matchers of a silence as one line: `app=shop, check=~cert.*`. */
export function describeMatchers(matchers: readonly LabelMatcher[]): string {
  return matchers.map(formatMatcher).join(', ');
}

interface DbSilence {
  id: string;
  matchers: string;
  starts_at: number;
  ends_at: number;
  created_by: string;
  reason: string;
  created_at: number;
  expired_at: number | null;
  expired_by: string | null;
  expire_reason: string | null;
}

function fromDb(row: DbSilence): Silence {
  const matchers = JSON.parse(row.matchers) as LabelMatcher[];
  return {
    id: row.id,
    matchers,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    createdBy: row.created_by,
    reason: row.reason,
    createdAt: row.created_at,
    expiredAt: row.expired_at,
    expiredBy: row.expired_by,
    expireReason: row.expire_reason,
    refused: refusal(matchers),
  };
}

/** Why stored matchers cannot be run (a pattern RE2 refuses), or null when they can. */
function refusal(matchers: readonly LabelMatcher[]): string | null {
  try {
    compileMatchers(matchers);
    return null;
  } catch (err) {
    if (err instanceof MatcherError) return err.message;
    throw err;
  }
}
