/**
 * Every write the product makes meets the store's write guard (`StoreOptions.writeGuard`: a
 * leader's fence), because the guard runs at the start of each outermost transaction and a write
 * made outside one would pass it by. The writes made from outside a cycle are the ones at risk: a
 * silence made or ended (console, CLI, Slack), and the audit row of a Slack click. Each is refused
 * whole by a guard that refuses, and made once it lets writes through.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSilence, expireSilence, listSilences } from '../../src/alerts/silences.js';
import { listInteractions, recordInteraction } from '../../src/interactions/interaction-audit-store.js';
import { FencedError } from '../../src/state/fenced-error.js';
import type { Store } from '../../src/state/store.js';
import { SQLITE_BACKEND } from '../helpers/state-backends.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const NOW = Date.parse('2026-11-29T00:00:00Z');

/** A store whose guard refuses while `refusing.now` is true (as a replica stepping down does). */
function guardedStore(): { store: Store; refusing: { now: boolean } } {
  const state = SQLITE_BACKEND.fresh();
  cleanups.push(() => state.cleanup());
  const refusing = { now: false };
  const store = state.open({
    writeGuard: () => {
      if (refusing.now) throw new FencedError('stepping down: test');
    },
  });
  cleanups.push(() => store.close());
  return { store, refusing };
}

const silenceOf = (store: Store) =>
  createSilence(store, {
    matchers: [{ name: 'check', op: '=', value: 'backups' }],
    durationMs: 3_600_000,
    reason: 'planned maintenance',
    createdBy: 'alice',
    now: NOW,
  });

describe('the writes made outside a cycle meet the write guard', () => {
  it('a silence made and ended', () => {
    const { store, refusing } = guardedStore();
    refusing.now = true;
    expect(() => silenceOf(store)).toThrow(FencedError);
    expect(listSilences(store, { now: NOW, includeExpired: true })).toEqual([]);
    refusing.now = false;
    const silence = silenceOf(store);
    refusing.now = true;
    expect(() => expireSilence(store, silence.id, NOW + 1, { by: 'bob' })).toThrow(FencedError);
    expect(listSilences(store, { now: NOW + 1 })).toHaveLength(1);
    refusing.now = false;
    expect(expireSilence(store, silence.id, NOW + 1, { by: 'bob' }).outcome).toBe('expired');
    expect(listSilences(store, { now: NOW + 1 })).toEqual([]);
  });

  it("a Slack click's audit row", () => {
    const { store, refusing } = guardedStore();
    const click = {
      at: NOW,
      channel: 'ops',
      slackUser: 'U0123',
      userName: 'alice',
      action: 'acknowledge',
      fingerprint: 'failed_runs/run/7',
      outcome: 'done' as const,
      detail: 'acknowledged',
    };
    refusing.now = true;
    expect(() => recordInteraction(store, click)).toThrow(FencedError);
    expect(listInteractions(store, { fingerprint: click.fingerprint })).toEqual([]);
    refusing.now = false;
    recordInteraction(store, click);
    expect(listInteractions(store, { fingerprint: click.fingerprint })).toEqual([click]);
  });
});
