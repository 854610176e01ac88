/**
 * Acknowledgement on a real SQLite file: what `acknowledge` and `unacknowledge` answer for every
 * standing of an alert (a stale click changes nothing), the event and routing row each writes in
 * one transaction, and the lifecycle around it: no repeat while acknowledged, an escalation or a
 * resolve ends it (saying so in its event) and still goes out, a new life starts without one.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  acknowledge,
  AcknowledgeError,
  acknowledgeText,
  unacknowledge,
  type AcknowledgeRequest,
} from '../../src/alerts/acknowledge.js';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { alertId, findAlert } from '../../src/alerts/alert-id.js';
import { eventsOfAlert, alertStoreOf } from '../../src/alerts/alert-store.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import type { Finding } from '../../src/detectors/finding.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { Store } from '../../src/state/store.js';
import { finding, HOUR, MINUTE, tempState, type TempState } from './fixtures.js';

const OPTIONS = { forCycles: 1, repeatIntervalMs: 4 * HOUR };

let state: TempState;
let store: Store;
let clock: ManualClock;

beforeEach(() => {
  state = tempState();
  store = state.open();
  clock = new ManualClock();
});
afterEach(() => state.cleanup());

function cycle(findings: Finding[], options = OPTIONS): AlertEvent[] {
  return store.transaction(() => applyFindings(store, { job: 'runs', findings, now: clock.now() }, options));
}

const ask = (over: Partial<AcknowledgeRequest> = {}): AcknowledgeRequest => ({
  fingerprint: 'a',
  by: 'alice',
  via: 'console',
  now: clock.now(),
  ...over,
});

const kindsOf = (fingerprint = 'a') => eventsOfAlert(store, fingerprint).map((e) => e.kind);
const unrouted = () =>
  store.db.prepare('SELECT event_id AS eventId FROM unrouted_events ORDER BY event_id').all() as { eventId: number }[];

/** Everything an answer that changes nothing must leave as it was. */
function snapshot() {
  return {
    alerts: store.db.prepare('SELECT * FROM alerts ORDER BY fingerprint').all(),
    events: store.db.prepare('SELECT id FROM events').all(),
    unrouted: unrouted(),
  };
}

describe('acknowledge', () => {
  it('takes a firing alert: its columns, an acknowledged event with who, where and why, and a row to route, together', () => {
    cycle([finding('a')]);
    clock.advance(MINUTE);
    const result = acknowledge(store, ask({ comment: '  looking at the deploy  ' }));
    expect(result.outcome).toBe('acknowledged');
    const ack = { by: 'alice', via: 'console', at: clock.now(), comment: 'looking at the deploy' };
    expect(alertStoreOf(store).get('a')?.acknowledgement).toEqual(ack);
    if (result.outcome !== 'acknowledged') return;
    expect(result.event).toMatchObject({
      kind: 'acknowledged',
      fingerprint: 'a',
      severity: 'warning',
      reason: 'acknowledged by alice (console)',
      acknowledgement: {
        by: 'alice',
        via: 'console',
        at: new Date(clock.now()).toISOString(),
        comment: 'looking at the deploy',
      },
    });
    expect(kindsOf()).toEqual(['firing', 'acknowledged']);
    expect(unrouted()).toEqual([{ eventId: result.event.id }]);
    expect(acknowledgeText(result)).toBe('Acknowledged by alice: its repeats stop until it resolves or gets worse.');
  });

  it('survives a restart: another process (the CLI) reads the same acknowledgement', () => {
    cycle([finding('a')]);
    acknowledge(store, ask({ via: 'cli', by: 'bob' }));
    const other = Store.open(state.file);
    try {
      expect(alertStoreOf(other).get('a')?.acknowledgement).toMatchObject({ by: 'bob', via: 'cli', comment: null });
    } finally {
      other.close();
    }
  });

  it.each<[string, () => void, string, RegExp]>([
    [
      'already acknowledged (by someone else)',
      () => {
        cycle([finding('a')]);
        acknowledge(store, ask({ by: 'bob', via: 'slack' }));
      },
      'already_acknowledged',
      /^Already acknowledged by bob \(slack, 2026-.* UTC\): nothing changed\.$/,
    ],
    [
      'resolved (a stale click)',
      () => {
        cycle([finding('a')]);
        clock.advance(MINUTE);
        cycle([]);
      },
      'not_firing',
      /^It was resolved at 2026-.* UTC: nothing to acknowledge, nothing changed\.$/,
    ],
    [
      'pending (not announced yet)',
      () => cycle([finding('a')], { ...OPTIONS, forCycles: 3 }),
      'not_firing',
      /^It is not firing yet \(pending\): nothing to acknowledge, nothing changed\.$/,
    ],
    ['unknown', () => cycle([finding('b')]), 'not_found', /^There is no alert a \(.*\): nothing changed\.$/],
  ])('changes nothing when the alert is %s, and says so', (_name, arrange, outcome, text) => {
    arrange();
    clock.advance(MINUTE);
    const before = snapshot();
    const result = acknowledge(store, ask());
    expect(result.outcome).toBe(outcome);
    expect(acknowledgeText(result)).toMatch(text);
    expect(snapshot()).toEqual(before);
  });

  it.each<[string, Partial<AcknowledgeRequest>, RegExp]>([
    ['no name', { by: '   ' }, /needs the name of who gives it/],
    ['a name too long', { by: 'x'.repeat(201) }, /201 characters long; at most 200/],
    ['a comment too long', { comment: 'y'.repeat(1001) }, /1001 characters long; at most 1000/],
  ])('refuses %s and writes nothing', (_name, over, message) => {
    cycle([finding('a')]);
    const before = snapshot();
    expect(() => acknowledge(store, ask(over))).toThrow(AcknowledgeError);
    expect(() => acknowledge(store, ask(over))).toThrow(message);
    expect(snapshot()).toEqual(before);
  });

  it("writes nothing when the caller's transaction rolls back", () => {
    cycle([finding('a')]);
    const before = snapshot();
    expect(() =>
      store.transaction(() => {
        acknowledge(store, ask());
        throw new Error('the caller failed after');
      }),
    ).toThrow('the caller failed after');
    expect(snapshot()).toEqual(before);
  });
});

describe('unacknowledge', () => {
  it('gives it back: the columns cleared, an unacknowledged event with who gave it back, a row to route', () => {
    cycle([finding('a')]);
    acknowledge(store, ask());
    clock.advance(MINUTE);
    const result = unacknowledge(store, ask({ by: 'bob', via: 'cli', comment: 'not mine' }));
    expect(result.outcome).toBe('unacknowledged');
    if (result.outcome !== 'unacknowledged') return;
    expect(result.ended.by).toBe('alice');
    expect(alertStoreOf(store).get('a')?.acknowledgement).toBeNull();
    expect(result.event).toMatchObject({
      kind: 'unacknowledged',
      reason: 'given back by bob (cli)',
      acknowledgement: { by: 'bob', via: 'cli', comment: 'not mine' },
    });
    expect(kindsOf()).toEqual(['firing', 'acknowledged', 'unacknowledged']);
    expect(unrouted()).toHaveLength(2);
    expect(acknowledgeText(result)).toBe('The acknowledgement by alice is given back: its repeats resume.');
  });

  it.each<[string, () => void, string]>([
    ['not acknowledged', () => cycle([finding('a')]), 'not_acknowledged'],
    [
      'resolved',
      () => {
        cycle([finding('a')]);
        acknowledge(store, ask());
        clock.advance(MINUTE);
        cycle([]);
      },
      'not_firing',
    ],
    ['unknown', () => undefined, 'not_found'],
  ])('changes nothing when the alert is %s', (_name, arrange, outcome) => {
    arrange();
    const before = snapshot();
    expect(unacknowledge(store, ask()).outcome).toBe(outcome);
    expect(snapshot()).toEqual(before);
  });
});

describe('the lifecycle of an acknowledged alert', () => {
  it('writes no repeat while it is acknowledged, and repeats again once it is given back', () => {
    cycle([finding('a')]);
    clock.advance(HOUR);
    acknowledge(store, ask({ now: clock.now() }));
    for (let i = 0; i < 12; i++) {
      clock.advance(HOUR);
      expect(cycle([finding('a')])).toEqual([]);
    }
    unacknowledge(store, ask({ now: clock.now() }));
    clock.advance(MINUTE);
    // Long past the interval since it was last announced: the repeat is due at once.
    expect(cycle([finding('a')]).map((e) => e.kind)).toEqual(['repeat']);
    expect(kindsOf()).toEqual(['firing', 'acknowledged', 'unacknowledged', 'repeat']);
  });

  it('ends the acknowledgement on an escalation, which still goes out and says whose it ended', () => {
    cycle([finding('a')]);
    acknowledge(store, ask({ comment: 'on it' }));
    clock.advance(MINUTE);
    const [escalated] = cycle([finding('a', { severity: 'critical' })]);
    expect(escalated).toMatchObject({
      kind: 'escalated',
      severity: 'critical',
      reason: 'severity rose warning→critical',
      acknowledgementCleared: { by: 'alice', via: 'console', comment: 'on it' },
    });
    expect(alertStoreOf(store).get('a')?.acknowledgement).toBeNull();
    // The repeats come back, counted from the escalation.
    clock.advance(4 * HOUR);
    expect(cycle([finding('a', { severity: 'critical' })]).map((e) => e.kind)).toEqual(['repeat']);
  });

  it('ends the acknowledgement on a resolve, which still goes out; the next life starts without one', () => {
    cycle([finding('a')]);
    acknowledge(store, ask());
    clock.advance(MINUTE);
    const [resolved] = cycle([]);
    expect(resolved).toMatchObject({ kind: 'resolved', acknowledgementCleared: { by: 'alice' } });
    expect(alertStoreOf(store).get('a')).toMatchObject({ status: 'resolved', acknowledgement: null });
    clock.advance(MINUTE);
    expect(cycle([finding('a')]).map((e) => e.kind)).toEqual(['firing']);
    expect(alertStoreOf(store).get('a')?.acknowledgement).toBeNull();
  });

  it('keeps the acknowledgement through a cycle that changes the summary, or lowers the severity', () => {
    cycle([finding('a', { severity: 'critical' })]);
    acknowledge(store, ask());
    clock.advance(MINUTE);
    expect(cycle([finding('a', { severity: 'warning', summary: 'Still a problem' })])).toEqual([]);
    expect(alertStoreOf(store).get('a')).toMatchObject({
      summary: 'Still a problem',
      acknowledgement: { by: 'alice' },
    });
  });

  it('says nothing of an acknowledgement on an event of an alert nobody took', () => {
    cycle([finding('a')]);
    clock.advance(MINUTE);
    const [escalated] = cycle([finding('a', { severity: 'critical' })]);
    expect(escalated).not.toHaveProperty('acknowledgementCleared');
    expect(escalated).not.toHaveProperty('acknowledgement');
  });
});

describe('findAlert', () => {
  it.each<[string, (fp: string) => string]>([
    ['its fingerprint', (fp) => fp],
    ['its short id', (fp) => alertId(fp)],
    ['its short id in capitals, with spaces around', (fp) => ` ${alertId(fp).toUpperCase()} `],
  ])('finds an alert by %s', (_name, ref) => {
    cycle([finding('failed_runs/run/5981'), finding('failed_runs/run/7')]);
    const found = findAlert(store, ref('failed_runs/run/5981'));
    expect(found.outcome === 'found' && found.alert.fingerprint).toBe('failed_runs/run/5981');
  });

  it.each(['failed_runs/run/1', '0123abcd', 'c0d9342', 'not an id'])('finds nothing for %j', (ref) => {
    cycle([finding('failed_runs/run/5981')]);
    expect(findAlert(store, ref)).toEqual({ outcome: 'not_found' });
  });

  it('refuses a short id two alerts share, naming both', () => {
    // Two fingerprints whose ids are both c0d93429 (found by search).
    cycle([finding('failed_runs/run/67499'), finding('failed_runs/run/129154')]);
    expect(alertId('failed_runs/run/67499')).toBe('c0d93429');
    expect(findAlert(store, 'c0d93429')).toEqual({
      outcome: 'ambiguous',
      fingerprints: ['failed_runs/run/129154', 'failed_runs/run/67499'],
    });
  });
});
