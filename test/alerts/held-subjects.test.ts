/**
 * The lifecycle's hold of alerts about records a read set aside (`LifecycleInput.held`): an absent
 * finding whose subject is held is neither resolved nor dropped, and carries the note why, written
 * without an event; once its record reads again, the note goes, again without an event. On every
 * state backend, as the lifecycle itself is tested.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertStoreOf } from '../../src/alerts/alert-store.js';
import { heldNote, shownDetails, withHeldNote, type HeldSubjects } from '../../src/alerts/held-subjects.js';
import { subjectKey } from '../../src/lib/alert-vocabulary.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import type { Finding } from '../../src/detectors/finding.js';
import { ManualClock } from '../helpers/manual-clock.js';
import type { Store } from '../../src/state/store.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';
import { finding, HOUR, MINUTE, tempState, type TempState } from './fixtures.js';

const OPTIONS = { forCycles: 1, repeatIntervalMs: 4 * HOUR };
const NOTE = 'cannot be read now: access_denied; held, not resolved';
const run = (id: number): Finding => finding(`failed_runs/run/${id}`, { subject: { type: 'run', id } });

describe('heldNote', () => {
  const held: HeldSubjects = new Map([
    [subjectKey({ type: 'run', id: 5 }), 'five'],
    [subjectKey({ type: 'url' }), 'every url'],
  ]);
  it.each([
    [{ type: 'run', id: 5 }, 'five'],
    [{ type: 'run', id: 6 }, undefined],
    [{ type: 'url', id: 99 }, 'every url'],
    [{ type: 'app', id: 5 }, undefined],
    [null, undefined],
  ] as const)('%j → %s', (subject, note) => {
    expect(heldNote(held, { subject, details: {} })).toBe(note);
  });

  it('adds the note as a detail and a fact, replaces an older one, and takes it away', () => {
    const f = run(1);
    const noted = withHeldNote(f, NOTE);
    expect(noted.details.held).toBe(NOTE);
    expect(noted.facts.at(-1)).toEqual({ label: 'Held', value: NOTE });
    expect(withHeldNote(noted, NOTE)).toBe(noted);
    const other = withHeldNote(noted, 'other');
    expect(other.facts.filter((x) => x.label === 'Held')).toEqual([{ label: 'Held', value: 'other' }]);
    expect(withHeldNote(other, undefined)).toEqual(f);
  });

  it('keeps a reason as a detail of its own, never a fact nor on an event, and takes it away with the note', () => {
    const f = run(1);
    const unseen = withHeldNote(f, { note: NOTE, reason: 'unseen' });
    expect(unseen.details).toMatchObject({ held: NOTE, held_reason: 'unseen' });
    expect(unseen.facts.filter((x) => x.label === 'Held')).toEqual([{ label: 'Held', value: NOTE }]);
    expect(unseen.facts.map((x) => x.value)).not.toContain('unseen');
    expect(shownDetails(unseen.details)).toEqual({ ...f.details, held: NOTE });
    // The same note given without the reason is a change: the reason goes.
    expect(withHeldNote(unseen, NOTE).details).not.toHaveProperty('held_reason');
    expect(withHeldNote(unseen, undefined)).toEqual(f);
  });
});

describe.each(STATE_BACKENDS)('holding on $name', (backend) => {
  let state: TempState;
  let store: Store;
  let clock: ManualClock;
  beforeEach(() => {
    state = tempState(backend);
    store = state.open();
    clock = new ManualClock();
  });
  afterEach(() => state.cleanup());

  const cycle = (findings: Finding[], held?: HeldSubjects) =>
    store.transaction(() => applyFindings(store, { job: 'runs', findings, now: clock.now(), held }, OPTIONS));

  it('an absent finding of a held subject stays firing with the note, no event; resolves once its record reads fine', () => {
    expect(cycle([run(1), run(2)]).map((e) => e.kind)).toEqual(['firing', 'firing']);
    clock.advance(MINUTE);
    const held = new Map([[subjectKey({ type: 'run', id: 1 }), NOTE]]);
    // Run 1 unreadable, run 2 over: run 2 resolves, run 1 is held and says why.
    expect(cycle([], held).map((e) => `${e.kind} ${e.fingerprint}`)).toEqual(['resolved failed_runs/run/2']);
    const row = alertStoreOf(store).get('failed_runs/run/1')!;
    expect(row.status).toBe('firing');
    expect(row.details.held).toBe(NOTE);
    expect(row.facts).toContainEqual({ label: 'Held', value: NOTE });
    clock.advance(MINUTE);
    expect(cycle([], held)).toEqual([]);
    clock.advance(MINUTE);
    expect(cycle([]).map((e) => `${e.kind} ${e.fingerprint}`)).toEqual(['resolved failed_runs/run/1']);
  });

  it('a present finding of a held subject carries the note without an event, and loses it the same way', () => {
    cycle([run(1)]);
    clock.advance(MINUTE);
    const held = new Map([[subjectKey({ type: 'run', id: 1 }), NOTE]]);
    expect(cycle([run(1)], held)).toEqual([]);
    expect(alertStoreOf(store).get('failed_runs/run/1')!.details.held).toBe(NOTE);
    clock.advance(MINUTE);
    expect(cycle([run(1)])).toEqual([]);
    expect(alertStoreOf(store).get('failed_runs/run/1')!.details.held).toBeUndefined();
  });

  it('a pending alert of a held subject is not dropped', () => {
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings: [run(3)], now: clock.now() }, { ...OPTIONS, forCycles: 3 }),
    );
    clock.advance(MINUTE);
    const held = new Map([[subjectKey({ type: 'run' }), NOTE]]);
    store.transaction(() =>
      applyFindings(store, { job: 'runs', findings: [], now: clock.now(), held }, { ...OPTIONS, forCycles: 3 }),
    );
    expect(alertStoreOf(store).get('failed_runs/run/3')?.status).toBe('pending');
  });
});
