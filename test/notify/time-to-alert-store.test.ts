/** The time_to_alert table on both engines: only an event's first delivery counts, percentiles per check. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { timeToAlertSummary, TimeToAlertStore, type FirstDelivery } from '../../src/notify/time-to-alert-store.js';
import { recordTimeOf } from '../../src/notify/time-to-alert.js';
import type { Store } from '../../src/state/store.js';
import { STATE_BACKENDS, type TestState } from '../helpers/state-backends.js';

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);

/** A first delivery of event `eventId`, `seconds` after its record's time, `agoMs` before now. */
const delivery = (eventId: number, check: string, seconds: number, agoMs = 0): FirstDelivery => ({
  eventId,
  check,
  channel: 'ops',
  recordAt: NOW - agoMs - seconds * 1000,
  deliveredAt: NOW - agoMs,
});

describe.each(STATE_BACKENDS)('time to alert on $name', (backend) => {
  let state: TestState;
  let store: Store;
  beforeEach(() => {
    state = backend.fresh();
    store = state.open();
  });
  afterEach(() => state.cleanup());

  it('keeps the first delivery of an event: another channel, or the same message sent again, adds nothing', () => {
    const rows = new TimeToAlertStore(store);
    const first = store.transaction(() =>
      rows.recordFirst([delivery(1, 'failed_runs', 40), delivery(2, 'url_checks', 5)]),
    );
    expect(first.map((d) => d.eventId)).toEqual([1, 2]);
    const again = store.transaction(() =>
      rows.recordFirst([{ ...delivery(1, 'failed_runs', 90), channel: 'mail' }, delivery(3, 'failed_runs', 20)]),
    );
    expect(again.map((d) => d.eventId)).toEqual([3]);
    expect(timeToAlertSummary(store, NOW - 60_000)).toEqual([
      { check: 'failed_runs', count: 2, p50: 20, p95: 40 },
      { check: 'url_checks', count: 1, p50: 5, p95: 5 },
    ]);
  });

  it('takes the percentiles over the window only, nearest rank', () => {
    const rows = new TimeToAlertStore(store);
    const seconds = [3, 8, 12, 20, 25, 31, 44, 52, 60, 75, 88, 95, 110, 130, 150, 170, 200, 240, 280, 600];
    store.transaction(() => {
      rows.recordFirst(seconds.map((s, i) => delivery(i + 1, 'failed_runs', s)));
      // Delivered two days ago: outside the window.
      rows.recordFirst([delivery(100, 'failed_runs', 9_999, 2 * 86_400_000)]);
    });
    expect(timeToAlertSummary(store, NOW - 86_400_000)).toEqual([
      { check: 'failed_runs', count: 20, p50: 75, p95: 280 },
    ]);
  });
});

describe('recordTimeOf', () => {
  it.each([
    [
      "a failed run: its since (the run's updated_at)",
      { since: '2026-11-27T11:59:00Z', details: {} },
      Date.UTC(2026, 10, 27, 11, 59),
    ],
    [
      "a URL check: the URL's public_checked_at",
      { since: null, details: { checked_at: '2026-11-27T11:58:00.000Z' } },
      Date.UTC(2026, 10, 27, 11, 58),
    ],
    [
      "an app's state: the app's updated_at",
      { since: null, details: { updated_at: '2026-11-27 11:57:00+00:00' } },
      Date.UTC(2026, 10, 27, 11, 57),
    ],
    ['a finding with no time of its own: not measured', { since: null, details: { state: 'error' } }, null],
  ])('%s', (_what, event, expected) => {
    expect(recordTimeOf(event)).toBe(expected);
  });
});
