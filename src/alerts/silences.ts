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
import { SilenceStore, type StoredSilence } from './silence-store.js';
import type { Store } from '../state/store.js';
import {
  compileMatchers,
  formatMatcher,
  MatcherError,
  type CompiledMatchers,
  type LabelMatcher,
  type MatchableLabels,
} from './matchers.js';

/** One silence as stored, with whether its matchers can be run; times in ms since the epoch. */
export interface Silence extends StoredSilence {
  /**
   * Why its matchers cannot be run, when they cannot: a pattern stored before matchers ran on RE2
   * (a lookahead, a backreference). Such a silence mutes nothing; null for every other.
   */
  refused: string | null;
}

/**
 * Where a silence is in its life at a given moment: in force, scheduled (a maintenance window
 * made ahead: it mutes nothing before its start), or over.
 */
export type SilenceState = 'active' | 'scheduled' | 'expired';

/** A silence that cannot be made as asked; the message says what was wrong. */
export class SilenceError extends Error {
  override name = 'SilenceError';
}

/** What {@link createSilence} needs. */
export interface NewSilence extends Pick<StoredSilence, 'reason' | 'createdBy'> {
  matchers: readonly LabelMatcher[];
  /** When it starts (a maintenance window planned ahead); absent or past: `now`. */
  startsAt?: number | undefined;
  /** How long it lasts from its start. */
  durationMs: number;
  now: number;
}

const ID_BYTES = 6;
/** The last time a JavaScript date can hold (ms): year 275760. */
const LAST_DATE_MS = 8.64e15;

/**
 * Stores a silence in force from its start (`now` unless a later `startsAt` is given) until
 * `startsAt + durationMs` (one already over is refused). Throws {@link SilenceError} when there is no matcher, the duration is not a
 * positive finite number, the start is not a time, the end is past the last time a date can show,
 * or the reason or author is empty; a matcher
 * whose regex does not compile throws `MatcherError`. Nothing is stored then.
 */
export function createSilence(store: Store, input: NewSilence): Silence {
  if (input.matchers.length === 0) {
    throw new SilenceError('a silence needs at least one matcher (a silence of everything would hide every alert)');
  }
  compileMatchers(input.matchers);
  if (!Number.isFinite(input.durationMs) || input.durationMs <= 0) {
    throw new SilenceError(`the silence duration must be greater than zero, got ${input.durationMs} ms`);
  }
  if (input.startsAt !== undefined && !Number.isFinite(input.startsAt)) {
    throw new SilenceError('the silence start must be a time');
  }
  const reason = input.reason.trim();
  if (!reason) throw new SilenceError('a silence needs a reason, so others know why alerts are muted');
  const createdBy = input.createdBy.trim();
  if (!createdBy) throw new SilenceError('a silence needs an author');

  const endsAt = (input.startsAt ?? input.now) + input.durationMs;
  // Stored, it would break every list and message that says when it ends.
  if (endsAt > LAST_DATE_MS) {
    throw new SilenceError(
      `the silence would end after the last time a date can show (${new Date(LAST_DATE_MS).toISOString()}): give a shorter duration`,
    );
  }
  if (endsAt <= input.now) {
    throw new SilenceError(`the silence would be over before it is made: it ends ${new Date(endsAt).toISOString()}`);
  }
  // A start already past mutes from now (what was sent before cannot be unsent), to the same end.
  const startsAt = Math.max(input.now, input.startsAt ?? input.now);
  const silence: Silence = {
    id: '',
    matchers: input.matchers.map(({ name, op, value }) => ({ name, op, value })),
    startsAt,
    endsAt,
    createdBy,
    reason,
    createdAt: input.now,
    expiredAt: null,
    expiredBy: null,
    expireReason: null,
    refused: null,
  };
  const silences = new SilenceStore(store);
  // In a transaction, as every write is: a leader's store fences it (`StoreOptions.writeGuard`).
  return store.transaction(() => {
    // A clash of 48 random bits is all but impossible; retrying costs nothing and makes it impossible.
    for (;;) {
      silence.id = randomBytes(ID_BYTES).toString('hex');
      if (silences.insert(silence)) return silence;
    }
  });
}

/**
 * Silences not over at `now` (active, or scheduled to start later), soonest end first; with
 * `includeExpired`, every stored silence, newest first.
 */
export function listSilences(store: Store, options: { now: number; includeExpired?: boolean }): Silence[] {
  const silences = new SilenceStore(store);
  return (options.includeExpired ? silences.every() : silences.notOver(options.now)).map(withRefusal);
}

/** The silences in force at some moment between `from` and `to` (the digest's day), earliest start first. */
export function silencesInForceDuring(store: Store, from: number, to: number): Silence[] {
  return new SilenceStore(store).inForceDuring(from, to).map(withRefusal);
}

/** One silence by id (case-insensitive), in whatever state. */
export function getSilence(store: Store, id: string): Silence | undefined {
  const stored = new SilenceStore(store).get(id.trim().toLowerCase());
  return stored ? withRefusal(stored) : undefined;
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
  // Read and written in one transaction: two people ending it at once end it once.
  return store.transaction(() => {
    const silence = getSilence(store, id);
    if (!silence) return { outcome: 'unknown-id' };
    if (silenceState(silence, now) === 'expired') return { outcome: 'already-over', silence };
    const expiredBy = who?.by.trim() || null;
    const expireReason = who?.reason?.trim() || null;
    new SilenceStore(store).expire(silence.id, now, expiredBy, expireReason);
    return { outcome: 'expired', silence: { ...silence, expiredAt: now, expiredBy, expireReason } };
  });
}

/** Whether a silence is in force, not yet started, or over, at `now`. */
export function silenceState(silence: Silence, now: number): SilenceState {
  if ((silence.expiredAt !== null && silence.expiredAt <= now) || silence.endsAt <= now) return 'expired';
  if (silence.startsAt > now) return 'scheduled';
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
    if (s.refused === null && (compiled.get(s) ?? compileMatchers(s.matchers))(labels)) best = s;
  }
  return best;
}

/** The matchers of a silence as one line: `app=shop, check=~cert.*`. */
export function describeMatchers(matchers: readonly LabelMatcher[]): string {
  return matchers.map(formatMatcher).join(', ');
}

/**
 * Each listed silence's matchers, compiled when it was read: the router asks every event of a
 * delivery round against the same list, and building an RE2 pattern costs tens of µs (10,000
 * events against 20 silences took seconds when each call compiled them again).
 */
const compiled = new WeakMap<Silence, CompiledMatchers>();

function withRefusal(stored: StoredSilence): Silence {
  try {
    const silence: Silence = { ...stored, refused: null };
    compiled.set(silence, compileMatchers(stored.matchers));
    return silence;
  } catch (err) {
    // A pattern RE2 refuses (one stored before matchers ran on RE2: a lookahead, a backreference).
    if (err instanceof MatcherError) return { ...stored, refused: err.message };
    throw err;
  }
}
