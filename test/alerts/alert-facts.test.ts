/**
 * What a reader is shown of an alert (its facts and one-line form) travels from the finding to the
 * alert row and every event of it; an alert stored before rows kept them still reads as it did.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../src/alerts/alert-event.js';
import { eventOf, alertStoreOf } from '../../src/alerts/alert-store.js';
import type { LifecycleOptions } from '../../src/alerts/decide.js';
import { applyFindings } from '../../src/alerts/lifecycle.js';
import type { Finding } from '../../src/detectors/finding.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { describeEvent } from '../../src/notify/channels/describe.js';
import { ALL_MIGRATIONS } from '../../src/state/migrations/index.js';
import { Store } from '../../src/state/store.js';
import { finding, HOUR, tempState, type TempState } from './fixtures.js';
import { STATE_BACKENDS } from '../helpers/state-backends.js';

const OPTIONS: LifecycleOptions = { forCycles: 1, repeatIntervalMs: 4 * HOUR };

/** A failed run with a step and a reason: facts Run, Step, Reason and a brief. */
const failed = (): Finding =>
  finding('failed_runs/run/7', {
    summary: 'Update of shop (staging) failed at step install: exit code 1',
    details: { run: '#7', workflow: 'app_update', step: 'install', reason: 'exit code 1' },
  });

let state: TempState;
let clock: ManualClock;

function cycle(store: Store, findings: Finding[]): AlertEvent[] {
  return store.transaction(() => applyFindings(store, { job: 'runs', findings, now: clock.now() }, OPTIONS));
}

describe.each(STATE_BACKENDS)('on $name', (backend) => {
  beforeEach(() => {
    state = tempState(backend);
    clock = new ManualClock();
  });
  afterEach(() => state.cleanup());

  describe('facts of an alert', () => {
    it('are the finding’s, stored with the alert and carried on its firing and resolved events', () => {
      const store = state.open();
      const f = failed();
      expect(f.facts).toEqual([
        { label: 'Run', value: '#7' },
        { label: 'Step', value: 'install' },
        { label: 'Reason', value: 'exit code 1' },
      ]);
      expect(f.brief).toBe('step install: exit code 1');

      const [firing] = cycle(store, [f]);
      expect(firing).toMatchObject({ kind: 'firing', facts: f.facts, brief: f.brief });
      expect(alertStoreOf(store).get(f.fingerprint)).toMatchObject({ facts: f.facts, brief: f.brief });
      const [resolved] = cycle(store, []);
      expect(resolved).toMatchObject({ kind: 'resolved', facts: f.facts, brief: f.brief });
    });

    it('are rewritten, without an event, when the finding shows others', () => {
      const store = state.open();
      cycle(store, [failed()]);
      const other = { ...failed(), facts: [{ label: 'Reason', value: 'disk full' }], brief: undefined };
      expect(cycle(store, [other])).toEqual([]);
      expect(alertStoreOf(store).get(other.fingerprint)).toMatchObject({ facts: other.facts, brief: null });
    });

    it('leave a finding without a brief shown by its summary', () => {
      const store = state.open();
      const f = finding('maintenance/app/3', {
        check: 'maintenance',
        summary: 'shop (production) has been in maintenance for more than 2h',
        details: { app: 'shop (production)', state: 'running', max_duration: '2h' },
      });
      const [firing] = cycle(store, [f]);
      expect(firing).not.toHaveProperty('brief');
      const shown = describeEvent(firing!, clock.now());
      expect(shown).toMatchObject({ brief: f.summary, briefIsSummary: true });
      expect(shown.facts).toEqual([
        { label: 'State', value: 'running' },
        { label: 'Allowed', value: '2h' },
      ]);
    });
  });

  describe('an alert stored before alerts kept facts (state version 5)', () => {
    /** The state file as the previous version left it: one firing failed_runs alert, no facts column. */
    function previousVersionState(f: Finding): void {
      const old = state.open({
        migrations: ALL_MIGRATIONS.slice(0, 5),
      });
      expect(old.schemaVersion()).toBe(5);
      old.db
        .prepare(
          `INSERT INTO alerts (fingerprint, job, check_name, status, severity, summary, details, labels, url, since,
           subject, first_seen_at, last_seen_at, seen_count, fired_at, last_notified_at, resolved_at)
         VALUES (?, 'runs', 'failed_runs', 'firing', ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, NULL)`,
        )
        .run(
          f.fingerprint,
          f.severity,
          f.summary,
          JSON.stringify(f.details),
          JSON.stringify(f.labels),
          f.url,
          f.since,
          JSON.stringify(f.subject),
          clock.now() - HOUR,
          clock.now() - HOUR,
          clock.now() - HOUR,
          clock.now() - HOUR,
        );
      old.close();
    }

    it('is shown with the facts and brief its check makes of its details, as before the upgrade', () => {
      const f = failed();
      previousVersionState(f);
      const store = state.open();
      const row = alertStoreOf(store).get(f.fingerprint)!;
      expect(row).toMatchObject({ status: 'firing', facts: null, brief: null });

      const old = eventOf(row, 'repeat', clock.now(), 'repeat interval elapsed');
      expect(old).not.toHaveProperty('facts');
      const shown = describeEvent({ id: 1, ...old }, clock.now());
      const current = describeEvent({ id: 2, ...old, facts: f.facts, brief: f.brief }, clock.now());
      expect(shown.facts).toEqual(current.facts);
      // Step and Reason are in its summary, so they are not shown again under it.
      expect(shown.facts.map((fact) => fact.label)).toEqual(['Run']);
      expect(shown).toMatchObject({ brief: 'step install: exit code 1', briefIsSummary: false });
    });

    it('gets its facts at its next sighting, without an event, and carries them on when it resolves', () => {
      const f = failed();
      previousVersionState(f);
      const store = state.open();
      expect(cycle(store, [f])).toEqual([]);
      expect(alertStoreOf(store).get(f.fingerprint)).toMatchObject({
        status: 'firing',
        facts: f.facts,
        brief: f.brief,
      });
      const [resolved] = cycle(store, []);
      expect(resolved).toMatchObject({ kind: 'resolved', facts: f.facts, brief: f.brief });
    });

    it('resolves with no facts stored and is still shown by its check', () => {
      const f = failed();
      previousVersionState(f);
      const store = state.open();
      const [resolved] = cycle(store, []);
      expect(resolved).toMatchObject({ kind: 'resolved', summary: f.summary });
      expect(resolved).not.toHaveProperty('facts');
      expect(describeEvent(resolved!, clock.now()).status).toMatch(/^RESOLVED after 1h/);
    });
  });
});
