/**
 * Why a pending alert is not told yet, as `alerts` and the console say it: the cycles `alerts.for`
 * still asks for, the hold its check asked for, or nothing any more, never "alerts.for" for a hold.
 */
import { describe, expect, it } from 'vitest';
import type { AlertHold, AlertStatus } from '../../src/alerts/alert-store.js';
import { pendingReason } from '../../src/alerts/pending-reason.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
const MINUTE = 60_000;
const FOLD = 'waiting up to 20m (checks.attention.fold_wait) for failed_runs to report run 5981';

describe('pendingReason', () => {
  it.each<[string, AlertStatus, number, number, AlertHold | null, string[]]>([
    // [what, status, seen, alerts.for, hold, reasons]
    ['a firing alert', 'firing', 3, 1, null, []],
    ['seen 1 of 3 cycles, no hold', 'pending', 1, 3, null, ['seen 1 of 3 cycles (alerts.for)']],
    [
      'held by fold_wait, alerts.for met',
      'pending',
      1,
      1,
      { until: NOW + 15 * MINUTE, reason: FOLD },
      [`held until 2026-11-27 12:15 UTC: ${FOLD}`],
    ],
    [
      'both at once',
      'pending',
      1,
      2,
      { until: NOW + MINUTE, reason: FOLD },
      ['seen 1 of 2 cycles (alerts.for)', `held until 2026-11-27 12:01 UTC: ${FOLD}`],
    ],
    [
      'a hold its check did not name',
      'pending',
      2,
      1,
      { until: NOW + MINUTE, reason: null },
      ["held until 2026-11-27 12:01 UTC: its check's wait"],
    ],
    [
      'held while its record is worked on again (no end time), alerts.for met',
      'pending',
      2,
      1,
      { until: null, reason: 'run #7 is running again (a retry): told only if the retry fails' },
      ['held: run #7 is running again (a retry): told only if the retry fails'],
    ],
    [
      'every reason passed',
      'pending',
      4,
      2,
      { until: NOW - MINUTE, reason: FOLD },
      ["nothing holds it any more: it fires at its job's next cycle"],
    ],
  ])('%s', (_what, status, seenCount, forCycles, hold, reasons) => {
    expect(pendingReason({ status, seenCount, hold }, forCycles, NOW)).toEqual(reasons);
  });
});
