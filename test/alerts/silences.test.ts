import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { MatcherError, parseMatcher } from '../../src/alerts/matchers.js';
import {
  activeSilenceFor,
  createSilence,
  describeMatchers,
  expireSilence,
  getSilence,
  listSilences,
  SilenceError,
  silenceState,
  type NewSilence,
} from '../../src/alerts/silences.js';
import type { Store } from '../../src/state/store.js';
import { finding, HOUR, MINUTE, tempState, type TempState } from './fixtures.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';

const T0 = Date.UTC(2026, 10, 1, 12);
let state: TempState;
let store: Store;

function silence(match: string[], over: Partial<NewSilence> = {}) {
  return createSilence(store, {
    matchers: match.map(parseMatcher),
    durationMs: 2 * HOUR,
    reason: 'planned certificate rotation',
    createdBy: 'alice',
    now: T0,
    ...over,
  });
}

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  beforeEach(() => {
    state = tempState(backend);
    store = state.open();
  });
  afterEach(() => state.cleanup());

  describe('createSilence', () => {
    it('stores a silence with a short unguessable id, in force from now for the duration', () => {
      const s = silence(['app=shop', 'check=~cert.*']);
      expect(s.id).toMatch(/^[0-9a-f]{12}$/);
      expect(s).toMatchObject({
        matchers: [
          { name: 'app', op: '=', value: 'shop' },
          { name: 'check', op: '=~', value: 'cert.*' },
        ],
        startsAt: T0,
        endsAt: T0 + 2 * HOUR,
        createdBy: 'alice',
        reason: 'planned certificate rotation',
        createdAt: T0,
        expiredAt: null,
      });
      expect(getSilence(store, s.id)).toEqual(s);
      expect(getSilence(store, s.id.toUpperCase())).toEqual(s);
      expect(silence(['app=shop']).id).not.toBe(s.id);
    });

    it.each<[string, Partial<NewSilence>, RegExp]>([
      ['no matcher', { matchers: [] }, /at least one matcher/],
      ['zero duration', { durationMs: 0 }, /duration must be greater than zero, got 0 ms/],
      ['negative duration', { durationMs: -5 }, /greater than zero/],
      ['infinite duration', { durationMs: Infinity }, /greater than zero/],
      ['an end no date can show', { durationMs: 8.64e15 }, /end after the last time a date can show/],
      ['blank reason', { reason: '  ' }, /needs a reason/],
      ['blank author', { createdBy: '' }, /needs an author/],
    ])('rejects %s and stores nothing', (_name, over, message) => {
      expect(() => silence(['app=shop'], over)).toThrow(SilenceError);
      expect(() => silence(['app=shop'], over)).toThrow(message);
      expect(listSilences(store, { now: T0, includeExpired: true })).toEqual([]);
    });

    it('rejects a matcher whose regex does not compile', () => {
      expect(() => silence([], { matchers: [{ name: 'app', op: '=~', value: '(' }] })).toThrow(MatcherError);
      expect(listSilences(store, { now: T0, includeExpired: true })).toEqual([]);
    });
  });

  describe('activeSilenceFor', () => {
    const labels = { check: 'certificates', app: 'shop', environment_type: 'production' };

    it.each<[string, string[], number, boolean]>([
      ['all matchers match, in force', ['app=shop', 'check=certificates'], T0 + HOUR, true],
      ['one matcher does not match', ['app=shop', 'check=backups'], T0 + HOUR, false],
      ['regex matcher', ['check=~cert.*'], T0, true],
      ['negative matcher', ['environment_type!=production'], T0, false],
      ['matcher on a missing label with ""', ['server='], T0, true],
      ['at its very end it no longer applies', ['app=shop'], T0 + 2 * HOUR, false],
      ['after its end', ['app=shop'], T0 + 3 * HOUR, false],
    ])('%s', (_name, match, now, muted) => {
      const s = silence(match);
      expect(activeSilenceFor(store, labels, now)?.id).toBe(muted ? s.id : undefined);
      expect(activeSilenceFor(listSilences(store, { now: T0, includeExpired: true }), labels, now)?.id).toBe(
        muted ? s.id : undefined,
      );
    });

    it('answers with the matching silence that ends last', () => {
      silence(['app=shop'], { durationMs: HOUR });
      const longer = silence(['check=certificates'], { durationMs: 3 * HOUR });
      silence(['app=crm'], { durationMs: 10 * HOUR });
      expect(activeSilenceFor(store, labels, T0 + MINUTE)?.id).toBe(longer.id);
    });

    it('stops muting once expired by hand, and says so on a second try', () => {
      const s = silence(['app=shop']);
      expect(activeSilenceFor(store, labels, T0 + MINUTE)?.id).toBe(s.id);
      const result = expireSilence(store, s.id, T0 + 10 * MINUTE);
      expect(result).toEqual({ outcome: 'expired', silence: { ...s, expiredAt: T0 + 10 * MINUTE } });
      expect(activeSilenceFor(store, labels, T0 + 11 * MINUTE)).toBeUndefined();
      expect(silenceState(getSilence(store, s.id)!, T0 + 11 * MINUTE)).toBe('expired');
      expect(expireSilence(store, s.id, T0 + 12 * MINUTE)).toMatchObject({ outcome: 'already-over' });
      expect(expireSilence(store, 'ffffffffffff', T0)).toEqual({ outcome: 'unknown-id' });
    });
  });

  describe('listSilences', () => {
    it('lists those not over, soonest end first; with includeExpired, all of them', () => {
      const long = silence(['app=shop'], { durationMs: 5 * HOUR });
      const short = silence(['app=crm'], { durationMs: HOUR });
      const expired = silence(['app=blog'], { durationMs: HOUR });
      expireSilence(store, expired.id, T0 + MINUTE);
      const ended = silence(['app=wiki'], { durationMs: MINUTE });

      expect(listSilences(store, { now: T0 + 2 * MINUTE }).map((s) => s.id)).toEqual([short.id, long.id]);
      expect(
        listSilences(store, { now: T0 + 2 * MINUTE, includeExpired: true })
          .map((s) => s.id)
          .sort(),
      ).toEqual([long.id, short.id, expired.id, ended.id].sort());
    });

    it('survives a restart', () => {
      const s = silence(['app=shop']);
      store.close();
      store = state.open();
      expect(listSilences(store, { now: T0 })).toEqual([s]);
    });

    it('marks a stored pattern RE2 refuses (written before matchers ran on it): it mutes nothing', () => {
      const s = silence(['app=shop']);
      // As an older daemon could have stored it: JavaScript's engine took a lookahead.
      const lookahead = JSON.stringify([{ name: 'app', op: '=~', value: '(?=sh)shop' }]);
      store.db.prepare('UPDATE silences SET matchers = ? WHERE id = ?').run(lookahead, s.id);
      const [loaded] = listSilences(store, { now: T0 });
      expect(loaded?.refused).toMatch(/not a regular expression RE2 takes/);
      expect(activeSilenceFor(store, { app: 'shop' }, T0 + MINUTE)).toBeUndefined();
      expect(getSilence(store, s.id)?.refused).toBe(loaded?.refused);
    });
  });

  describe('silences and the lifecycle', () => {
    it('a silenced alert is still tracked: it fires and resolves in the alert state', () => {
      silence(['app=shop']);
      const opts = { forCycles: 1, repeatIntervalMs: 4 * HOUR };
      const fired = store.transaction(() =>
        applyFindings(store, { job: 'runs', findings: [finding('a')], now: T0 }, opts),
      );
      expect(fired).toMatchObject([{ kind: 'firing' }]);
      expect(activeSilenceFor(store, fired[0]!.labels, T0)).toBeDefined();
      expect(alertStoreOf(store).get('a')?.status).toBe('firing');
      const resolved = store.transaction(() =>
        applyFindings(store, { job: 'runs', findings: [], now: T0 + MINUTE }, opts),
      );
      expect(resolved).toMatchObject([{ kind: 'resolved' }]);
    });
  });

  describe('describeMatchers', () => {
    it('renders matchers as one line', () => {
      expect(describeMatchers(['app=shop', 'check=~cert.*', 'reason="a b"'].map(parseMatcher))).toBe(
        'app=shop, check=~cert.*, reason="a b"',
      );
    });
  });
});
