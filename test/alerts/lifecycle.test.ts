import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import type { Finding } from '../../src/detectors/finding.js';
import { applyFindings, type ApplyOptions, type ResolveGuardReport } from '../../src/alerts/lifecycle.js';
import { AlertStore, alertStoreOf } from '../../src/alerts/alert-store.js';
import type { LifecycleOptions } from '../../src/alerts/decide.js';
import type { JobKey } from '../../src/alerts/job-key.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { captureLogger } from '../notify/channels/fixtures.js';
import type { Store } from '../../src/state/store.js';
import { finding, HOUR, MINUTE, tempState, type TempState } from './fixtures.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';

const OPTIONS: LifecycleOptions = { forCycles: 1, repeatIntervalMs: 4 * HOUR };

let state: TempState;
let store: Store;
let clock: ManualClock;

/** One cycle as the daemon runs it: inside a transaction the caller opened. */
function cycle(
  findings: Finding[],
  options: ApplyOptions = OPTIONS,
  job: JobKey = 'runs',
  on: Store | AlertStore = store,
): AlertEvent[] {
  const db = on instanceof AlertStore ? on.store : on;
  return db.transaction(() => applyFindings(on, { job, findings, now: clock.now() }, options));
}

const kinds = (events: AlertEvent[]) => events.map((e) => `${e.kind} ${e.fingerprint}`);

function storedEvents(s: Store = store): { fingerprint: string; kind: string; payload: Omit<AlertEvent, 'id'> }[] {
  return (
    s.db.prepare('SELECT fingerprint, kind, payload FROM events ORDER BY id').all() as {
      fingerprint: string;
      kind: string;
      payload: string;
    }[]
  ).map((r) => ({ ...r, payload: JSON.parse(r.payload) as Omit<AlertEvent, 'id'> }));
}

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  beforeEach(() => {
    state = tempState(backend);
    store = state.open();
    clock = new ManualClock();
  });
  afterEach(() => state.cleanup());

  describe('a record worked on again, and a read cut short', () => {
    /** One cycle with `cut` and an `onUnderway` listener; answers the events and who began a retry. */
    function watched(findings: Finding[], extra: { cut?: string; incomplete?: string[] } = {}) {
      const began: string[] = [];
      const input = {
        job: 'runs' as const,
        findings,
        now: clock.now(),
        onUnderway: (a: { fingerprint: string }) => began.push(a.fingerprint),
        ...extra,
      };
      const events = store.transaction(() => applyFindings(store, input, OPTIONS));
      return { events, began };
    }
    const retrying = (since: string) =>
      finding('r', {
        underway: true,
        details: { run: '#r', retry_since: since },
        holdReason: 'run #r is running again',
      });

    it("tells a firing alert's new retry once per spell, with no event; a pending one is held with no end time", () => {
      expect(watched([finding('r')]).events).toHaveLength(1);
      clock.advance(MINUTE);
      expect(watched([retrying('2026-11-27T10:42:00.000Z')])).toEqual({ events: [], began: ['r'] });
      clock.advance(MINUTE);
      expect(watched([retrying('2026-11-27T10:42:00.000Z')])).toEqual({ events: [], began: [] });
      clock.advance(MINUTE);
      expect(watched([retrying('2026-11-27T10:50:00.000Z')]).began).toEqual(['r']);

      // Not firing yet: held, saying why, with no end time; never told as begun.
      const pending = watched([
        retrying('2026-11-27T10:50:00.000Z'),
        { ...retrying('2026-11-27T10:42:00.000Z'), fingerprint: 'p', subject: { type: 'run', id: 2 } },
      ]);
      expect(pending).toEqual({ events: [], began: [] });
      expect(alertStoreOf(store).get('p')).toMatchObject({
        status: 'pending',
        hold: { until: null, reason: 'run #r is running again' },
      });
    });

    it('holds what a cut read did not reach, saying why, and takes the note off when it resolves', () => {
      watched([finding('a'), finding('b', { subject: { type: 'run', id: 2 } })]);
      clock.advance(MINUTE);
      const cut = watched([finding('a')], { cut: 'the read was cut short (x)', incomplete: ['failed_runs/', 'b'] });
      expect(cut.events).toEqual([]);
      expect(alertStoreOf(store).get('b')).toMatchObject({
        status: 'firing',
        details: { held: 'not read: the read was cut short (x); held, not resolved' },
      });
      expect(alertStoreOf(store).get('a')?.details.held).toBeUndefined();
      clock.advance(MINUTE);
      expect(kinds(watched([finding('a')]).events)).toEqual(['resolved b']);
      expect(alertStoreOf(store).get('b')?.details.held).toBeUndefined();
    });
  });

  describe('applyFindings', () => {
    it('announces a problem once when it starts, on escalation, on repeat, and once when it is over', () => {
      const start = clock.now();
      const first = cycle([finding('a')]);
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({
        kind: 'firing',
        fingerprint: 'a',
        check: 'failed_runs',
        severity: 'warning',
        summary: 'Problem a',
        details: { run: '#a' },
        labels: { check: 'failed_runs', app: 'shop', environment_type: 'staging' },
        url: 'https://shop.example.com',
        startsAt: new Date(start).toISOString(),
        endsAt: null,
        at: new Date(start).toISOString(),
        reason: 'first sighting',
        job: 'runs',
        subject: { type: 'run', id: 1 },
        since: '2026-11-01T11:00:00Z',
      });
      expect(first[0]?.id).toBeGreaterThan(0);

      clock.advance(MINUTE);
      expect(cycle([finding('a')])).toEqual([]);
      expect(alertStoreOf(store).get('a')).toMatchObject({
        status: 'firing',
        seenCount: 2,
        lastSeenAt: clock.now(),
        firedAt: start,
      });

      clock.advance(MINUTE);
      expect(
        cycle([
          finding('a', {
            summary: 'Problem a, still',
            labels: { check: 'failed_runs', app: 'shop', server: undefined },
          }),
        ]),
      ).toEqual([]);
      expect(alertStoreOf(store).get('a')).toMatchObject({
        summary: 'Problem a, still',
        labels: { check: 'failed_runs', app: 'shop' },
        seenCount: 3,
      });

      clock.advance(MINUTE);
      const escalated = cycle([finding('a', { severity: 'critical' })]);
      expect(escalated).toMatchObject([
        {
          kind: 'escalated',
          severity: 'critical',
          reason: 'severity rose warning→critical',
          startsAt: new Date(start).toISOString(),
        },
      ]);

      // The escalation restarted the repeat clock.
      clock.advance(4 * HOUR - MINUTE);
      expect(cycle([finding('a', { severity: 'critical' })])).toEqual([]);
      clock.advance(MINUTE);
      expect(cycle([finding('a', { severity: 'critical' })])).toMatchObject([
        { kind: 'repeat', reason: 'repeat interval elapsed' },
      ]);

      // Severity falling is recorded silently; the next repeat carries it.
      clock.advance(MINUTE);
      expect(cycle([finding('a', { severity: 'warning' })])).toEqual([]);
      expect(alertStoreOf(store).get('a')?.severity).toBe('warning');
      clock.advance(4 * HOUR);
      expect(cycle([finding('a', { severity: 'warning' })])).toMatchObject([{ kind: 'repeat', severity: 'warning' }]);

      clock.advance(MINUTE);
      const resolved = cycle([]);
      expect(resolved).toMatchObject([
        {
          kind: 'resolved',
          fingerprint: 'a',
          reason: 'absent from complete snapshot',
          endsAt: new Date(clock.now()).toISOString(),
          startsAt: new Date(start).toISOString(),
        },
      ]);
      expect(alertStoreOf(store).get('a')).toMatchObject({ status: 'resolved', resolvedAt: clock.now() });
      expect(alertStoreOf(store).open()).toEqual([]);

      clock.advance(MINUTE);
      expect(cycle([])).toEqual([]);

      // Every returned event is stored, with the same content, in the same order.
      const stored = storedEvents();
      expect(stored.map((e) => e.kind)).toEqual(['firing', 'escalated', 'repeat', 'repeat', 'resolved']);
      const { id: resolvedId, ...resolvedPayload } = resolved[0]!;
      expect(resolvedId).toBeGreaterThan(0);
      expect(stored[4]?.payload).toEqual(resolvedPayload);
    });

    it('a severity that flaps escalates once: rising back to what was told is no news', () => {
      const at = (severity: 'warning' | 'critical') => {
        clock.advance(MINUTE);
        return kinds(cycle([finding('a', { severity })]));
      };
      expect(at('warning')).toEqual(['firing a']);
      expect(at('critical')).toEqual(['escalated a']);
      expect([at('warning'), at('critical'), at('warning'), at('critical')]).toEqual([[], [], [], []]);
      // The row says what the finding says now; the next repeat carries it.
      expect(alertStoreOf(store).get('a')?.severity).toBe('critical');

      // A new life is told again, from its own start.
      clock.advance(MINUTE);
      expect(kinds(cycle([]))).toEqual(['resolved a']);
      expect(at('critical')).toEqual(['firing a']);
      expect([at('warning'), at('critical')]).toEqual([[], []]);
    });

    it('damps flaps with for: 3 — a finding gone within 2 cycles produces no events at all', () => {
      const options = { ...OPTIONS, forCycles: 3 };
      expect(cycle([finding('a')], options)).toEqual([]);
      expect(alertStoreOf(store).get('a')).toMatchObject({ status: 'pending', seenCount: 1 });
      clock.advance(MINUTE);
      expect(cycle([finding('a')], options)).toEqual([]);
      expect(alertStoreOf(store).get('a')).toMatchObject({ status: 'pending', seenCount: 2 });
      clock.advance(MINUTE);
      expect(cycle([], options)).toEqual([]);
      expect(alertStoreOf(store).get('a')).toBeUndefined();
      // It came back: the count starts over.
      clock.advance(MINUTE);
      expect(cycle([finding('a')], options)).toEqual([]);
      clock.advance(MINUTE);
      expect(cycle([finding('a')], options)).toEqual([]);
      clock.advance(MINUTE);
      expect(cycle([finding('a')], options)).toMatchObject([{ kind: 'firing', reason: 'seen for 3 cycles' }]);
      expect(storedEvents().map((e) => e.kind)).toEqual(['firing']);
    });

    it('holds a finding with holdForMs until seen continuously that long since first sighting', () => {
      const held = () => finding('stuck', { check: 'stuck_runs', holdForMs: 30 * MINUTE });
      const firstSeen = clock.now();
      for (let minute = 0; minute < 30; minute += 10) {
        expect(cycle([held()])).toEqual([]);
        clock.advance(10 * MINUTE);
      }
      const fired = cycle([held()]);
      expect(fired).toMatchObject([{ kind: 'firing', reason: 'held for 30m' }]);
      expect(alertStoreOf(store).get('stuck')).toMatchObject({
        firstSeenAt: firstSeen,
        firedAt: clock.now(),
        seenCount: 4,
      });
    });

    it('rewrites a pending alert seen again only when its content or hold moved', () => {
      const rewrites = vi.spyOn(AlertStore.prototype, 'updateOpen');
      const held = (minutes: number, summary = 'stuck') =>
        finding('stuck', { summary, holdForMs: minutes * MINUTE, holdReason: `${minutes}m` });
      const firstSeen = clock.now();
      expect(cycle([held(30)])).toEqual([]);
      clock.advance(10 * MINUTE);
      // Unchanged: one more sighting counted, nothing rewritten (a steady cycle's hundreds of
      // pending alerts are one statement, as firing ones are).
      expect(cycle([held(30)])).toEqual([]);
      expect(rewrites).not.toHaveBeenCalled();
      expect(alertStoreOf(store).get('stuck')).toMatchObject({
        status: 'pending',
        seenCount: 2,
        lastSeenAt: clock.now(),
        hold: { until: firstSeen + 30 * MINUTE, reason: '30m' },
      });
      // A reload shortened the wait: the hold says so, from the same first sighting.
      clock.advance(MINUTE);
      expect(cycle([held(20)])).toEqual([]);
      expect(alertStoreOf(store).get('stuck')).toMatchObject({
        seenCount: 3,
        hold: { until: firstSeen + 20 * MINUTE, reason: '20m' },
      });
      // Its words changed: the row is rewritten with them.
      clock.advance(MINUTE);
      expect(cycle([held(20, 'stuck for longer')])).toEqual([]);
      expect(rewrites).toHaveBeenCalledTimes(1);
      expect(alertStoreOf(store).get('stuck')).toMatchObject({ summary: 'stuck for longer', seenCount: 4 });
      rewrites.mockRestore();
    });

    it('a clock stepped back a day neither adds the step to a hold nor to a repeat interval', () => {
      const held = () => finding('stuck', { holdForMs: 30 * MINUTE });
      expect(cycle([held(), finding('a')])).toHaveLength(1);
      clock.advance(20 * MINUTE);
      expect(cycle([held(), finding('a')])).toEqual([]);
      clock.stepBack(24 * HOUR);
      // Held 20 minutes of 30 before the step: 10 more, not a day more.
      clock.advance(MINUTE);
      const { logger, lines } = captureLogger();
      expect(cycle([held(), finding('a')], { ...OPTIONS, logger })).toEqual([]);
      expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
        "the clock went back: 2 runs alerts' holds and repeats go on from their last sighting " +
          '(it was set for 2026-11-01T12:20:00Z, now 2026-10-31T12:21:00Z)',
      ]);
      clock.advance(10 * MINUTE);
      expect(kinds(cycle([held(), finding('a')]))).toEqual(['firing stuck']);
      // Told 30 minutes ago, as counted across the step: repeated once 4 hours are up, not 28.
      clock.advance(4 * HOUR - 30 * MINUTE - 1);
      expect(cycle([held(), finding('a')])).toEqual([]);
      clock.advance(1);
      expect(kinds(cycle([held(), finding('a')]))).toEqual(['repeat a']);
    });

    it('restarts the hold when the finding disappears in between', () => {
      const held = () => finding('stuck', { holdForMs: 30 * MINUTE });
      expect(cycle([held()])).toEqual([]);
      clock.advance(20 * MINUTE);
      expect(cycle([])).toEqual([]);
      clock.advance(MINUTE);
      expect(cycle([held()])).toEqual([]);
      clock.advance(20 * MINUTE);
      expect(cycle([held()])).toEqual([]);
      clock.advance(10 * MINUTE);
      expect(cycle([held()])).toMatchObject([{ kind: 'firing' }]);
    });

    it('starts a new alert life when a resolved problem comes back', () => {
      cycle([finding('a')]);
      clock.advance(MINUTE);
      cycle([]);
      clock.advance(MINUTE);
      const again = cycle([finding('a')]);
      expect(again).toMatchObject([
        { kind: 'firing', reason: 'first sighting', startsAt: new Date(clock.now()).toISOString() },
      ]);
      expect(alertStoreOf(store).get('a')).toMatchObject({
        status: 'firing',
        seenCount: 1,
        resolvedAt: null,
        firstSeenAt: clock.now(),
      });
    });

    it("writes a new life's own hold with it, and none of a resolved life's", () => {
      const held = (reason: string, minutes: number) =>
        finding('h', { holdForMs: minutes * MINUTE, holdReason: reason });
      cycle([held('first wait', 30)]);
      expect(alertStoreOf(store).get('h')?.hold).toEqual({ until: clock.now() + 30 * MINUTE, reason: 'first wait' });
      clock.advance(30 * MINUTE);
      expect(kinds(cycle([held('first wait', 30)]))).toEqual(['firing h']);
      clock.advance(MINUTE);
      expect(kinds(cycle([]))).toEqual(['resolved h']);
      // The resolved row still says what its life waited for…
      expect(alertStoreOf(store).get('h')?.hold).toMatchObject({ reason: 'first wait' });
      clock.advance(MINUTE);
      // …and a new life fired at its first sighting says no hold at all.
      expect(kinds(cycle([finding('h')]))).toEqual(['firing h']);
      expect(alertStoreOf(store).get('h')?.hold).toBeNull();
      clock.advance(MINUTE);
      expect(kinds(cycle([]))).toEqual(['resolved h']);
      clock.advance(MINUTE);
      expect(cycle([held('second wait', 10)])).toEqual([]);
      expect(alertStoreOf(store).get('h')).toMatchObject({
        status: 'pending',
        firstSeenAt: clock.now(),
        hold: { until: clock.now() + 10 * MINUTE, reason: 'second wait' },
      });
    });

    it("scopes alerts by job: one job never resolves another job's alerts", () => {
      expect(kinds(cycle([finding('run/1')], OPTIONS, 'runs'))).toEqual(['firing run/1']);
      expect(kinds(cycle([finding('cert/1', { check: 'certificates' })], OPTIONS, 'urls'))).toEqual(['firing cert/1']);
      clock.advance(MINUTE);
      expect(cycle([], OPTIONS, 'runs').map((e) => e.fingerprint)).toEqual(['run/1']);
      expect(alertStoreOf(store).get('cert/1')?.status).toBe('firing');
      clock.advance(MINUTE);
      expect(kinds(cycle([], OPTIONS, 'urls'))).toEqual(['resolved cert/1']);
    });

    it('leaves absent alerts under an incomplete prefix as they are: not resolved, not dropped', () => {
      const incompleteCycle = (findings: Finding[], incomplete: string[], options = OPTIONS) =>
        store.transaction(() =>
          applyFindings(store, { job: 'attention', findings, incomplete, now: clock.now() }, options),
        );
      expect(kinds(incompleteCycle([finding('att/r/1'), finding('att/r/2'), finding('att/rx/1')], ['att/r/']))).toEqual(
        ['firing att/r/1', 'firing att/r/2', 'firing att/rx/1'],
      );
      // A pending one too (for: 2), so "not dropped" is checked as well as "not resolved".
      incompleteCycle([finding('att/r/1'), finding('att/r/2'), finding('att/rx/1'), finding('att/r/3')], ['att/r/'], {
        ...OPTIONS,
        forCycles: 2,
      });
      expect(alertStoreOf(store).get('att/r/3')?.status).toBe('pending');
      const before = alertStoreOf(store).get('att/r/2');

      clock.advance(MINUTE);
      // r/2 and r/3 are not listed, rx/1 is gone: only the complete rule resolves.
      expect(kinds(incompleteCycle([finding('att/r/1')], ['att/r/']))).toEqual(['resolved att/rx/1']);
      expect(alertStoreOf(store).get('att/r/2')).toEqual(before);
      expect(alertStoreOf(store).get('att/r/3')?.status).toBe('pending');

      clock.advance(MINUTE);
      // The section is complete again: what it does not list is over.
      expect(kinds(incompleteCycle([finding('att/r/1')], []))).toEqual(['resolved att/r/2']);
      expect(alertStoreOf(store).get('att/r/3')).toBeUndefined();
    });

    it('leaves an absent alert named whole by incomplete as it is, and only that one', () => {
      const incompleteCycle = (findings: Finding[], incomplete: string[]) =>
        store.transaction(() =>
          applyFindings(store, { job: 'attention', findings, incomplete, now: clock.now() }, OPTIONS),
        );
      incompleteCycle([finding('att/r/id/5'), finding('att/r/id/55')], []);
      clock.advance(MINUTE);
      // Without a trailing `/` it is one fingerprint, not a prefix: id/55 is not covered by id/5.
      expect(kinds(incompleteCycle([], ['att/r/id/5']))).toEqual(['resolved att/r/id/55']);
      expect(alertStoreOf(store).get('att/r/id/5')?.status).toBe('firing');
    });

    it('does not let another job take over an open alert of the same fingerprint', () => {
      cycle([finding('shared')], OPTIONS, 'runs');
      clock.advance(MINUTE);
      expect(cycle([finding('shared', { severity: 'critical' })], OPTIONS, 'attention')).toEqual([]);
      expect(alertStoreOf(store).get('shared')).toMatchObject({ job: 'runs', severity: 'warning' });
    });

    it('survives a restart: nothing known is re-announced and resolution still happens', () => {
      cycle([finding('a'), finding('b', { severity: 'critical' })]);
      cycle([finding('p')], { ...OPTIONS, forCycles: 1 }, 'attention');
      store.close();

      clock.advance(MINUTE);
      store = state.open();
      expect(cycle([finding('a'), finding('b', { severity: 'critical' })])).toEqual([]);
      expect(cycle([finding('p')], OPTIONS, 'attention')).toEqual([]);
      store.close();

      clock.advance(MINUTE);
      store = state.open();
      expect(kinds(cycle([finding('b', { severity: 'critical' })]))).toEqual(['resolved a']);
      expect(
        alertStoreOf(store)
          .open()
          .map((a) => a.fingerprint),
      ).toEqual(['b', 'p']);
    });

    it('keeps counting pending sightings across a restart', () => {
      const options = { ...OPTIONS, forCycles: 2 };
      expect(cycle([finding('a')], options)).toEqual([]);
      store.close();
      store = state.open();
      clock.advance(MINUTE);
      expect(kinds(cycle([finding('a')], options))).toEqual(['firing a']);
    });

    // Three cycles of 10,000 findings: some 30,000 statements, each one a round trip to the worker
    // thread on PostgreSQL (8-18 s on SQLite, 110-183 s on PostgreSQL at a load of 10-14). The work
    // really is that long: room for it, rather than fewer findings than the scale this proves.
    it(
      'handles 10,000 findings in one cycle, with a prepared AlertStore reused across cycles',
      { timeout: 400_000 },
      () => {
        const alerts = new AlertStore(store);
        const many = Array.from({ length: 10_000 }, (_, i) =>
          finding(`f/${i}`, { severity: i % 10 === 0 ? 'critical' : 'warning' }),
        );
        const fired = cycle(many, OPTIONS, 'runs', alerts);
        expect(fired).toHaveLength(10_000);
        expect(new Set(fired.map((e) => e.id)).size).toBe(10_000);
        expect(fired.every((e) => e.kind === 'firing')).toBe(true);

        clock.advance(MINUTE);
        expect(cycle(many, OPTIONS, 'runs', alerts)).toEqual([]);

        clock.advance(MINUTE);
        const half = many.filter((_, i) => i % 2 === 0);
        const resolved = cycle(half, OPTIONS, 'runs', alerts);
        expect(resolved).toHaveLength(5_000);
        expect(resolved.every((e) => e.kind === 'resolved')).toBe(true);
        expect(alertStoreOf(alerts).open()).toHaveLength(5_000);
        // Most important first: the criticals lead.
        expect(alertStoreOf(alerts).open()[0]?.severity).toBe('critical');
      },
    );

    it('keeps the first of duplicate fingerprints in one snapshot', () => {
      const events = cycle([finding('a', { summary: 'first' }), finding('a', { summary: 'second' })]);
      expect(events).toMatchObject([{ kind: 'firing', summary: 'first' }]);
    });

    it('refuses to run outside a transaction', () => {
      expect(() => applyFindings(store, { job: 'runs', findings: [finding('a')], now: clock.now() }, OPTIONS)).toThrow(
        /must run inside store\.transaction/,
      );
      expect(alertStoreOf(store).get('a')).toBeUndefined();
    });

    it("writes nothing when the caller's transaction rolls back", () => {
      expect(() =>
        store.transaction(() => {
          applyFindings(store, { job: 'runs', findings: [finding('a')], now: clock.now() }, OPTIONS);
          throw new Error('outbox write failed');
        }),
      ).toThrow('outbox write failed');
      expect(alertStoreOf(store).get('a')).toBeUndefined();
      expect(storedEvents()).toEqual([]);
      // So the next cycle announces it: nothing was lost.
      expect(kinds(cycle([finding('a')]))).toEqual(['firing a']);
    });
  });

  describe('applyFindings: the resolve guard', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const guarded = (reports: ResolveGuardReport[]): ApplyOptions => ({
      ...OPTIONS,
      resolveGuard: { min_alerts: 5, max_share: 0.5, confirm_cycles: 2 },
      onResolveGuard: (r) => reports.push(r),
    });

    it('resolves nothing when one answer drops most problems at once, until the next cycle confirms it', () => {
      const reports: ResolveGuardReport[] = [];
      cycle(
        ids.map((id) => finding(id)),
        guarded(reports),
      );
      clock.advance(MINUTE);
      expect(cycle([finding('a')], guarded(reports))).toEqual([]);
      expect(
        alertStoreOf(store)
          .open()
          .map((a) => a.status),
      ).toEqual(Array(6).fill('firing'));
      expect(reports.at(-1)).toMatchObject({
        job: 'runs',
        firing: 6,
        resolving: 5,
        decision: { hold: true, suspectCycles: 1 },
      });

      clock.advance(MINUTE);
      const confirmed = cycle([finding('a')], guarded(reports));
      expect(kinds(confirmed).sort()).toEqual(['resolved b', 'resolved c', 'resolved d', 'resolved e', 'resolved f']);
      expect(reports.at(-1)).toMatchObject({
        resolving: 5,
        decision: { hold: false, reason: 'confirmed', confirmedAfter: 2 },
      });
    });

    it('forgets a suspect cycle when the problems come back, and counts across a restart', () => {
      const reports: ResolveGuardReport[] = [];
      cycle(
        ids.map((id) => finding(id)),
        guarded(reports),
      );
      expect(cycle([], guarded(reports))).toEqual([]);
      // Back: the empty answer was the service's mistake; nothing was said, nothing is said now.
      expect(
        cycle(
          ids.map((id) => finding(id)),
          guarded(reports),
        ),
      ).toEqual([]);
      expect(cycle([], guarded(reports))).toEqual([]);
      expect(reports.at(-1)!.decision).toMatchObject({ hold: true, suspectCycles: 1 });

      // The count of suspect cycles is state: a restart in between does not start it again.
      const reopened = state.open();
      const events = reopened.transaction(() =>
        applyFindings(reopened, { job: 'runs', findings: [], now: clock.now() }, guarded(reports)),
      );
      expect(events.map((e) => e.kind)).toEqual(Array(6).fill('resolved'));
    });

    it('lets ordinary resolutions through: a few, or a small share', () => {
      const reports: ResolveGuardReport[] = [];
      const many = Array.from({ length: 20 }, (_, i) => finding(`x${i}`));
      cycle(many, guarded(reports));
      expect(cycle(many.slice(6), guarded(reports))).toHaveLength(6); // 6 of 20: not more than half
      expect(cycle(many.slice(10), guarded(reports))).toHaveLength(4); // fewer than 5
      expect(reports.every((r) => r.decision.reason === 'plausible')).toBe(true);
    });
  });
});
