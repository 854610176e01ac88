import { describe, expect, it } from 'vitest';
import type { AlertRow, AlertStatus } from '../../src/alerts/alert-store.js';
import { decide, type Decision } from '../../src/alerts/decide.js';
import type { Severity } from '../../src/lib/alert-vocabulary.js';
import { finding, HOUR, MINUTE } from './fixtures.js';

const T0 = Date.UTC(2026, 10, 1, 12);

function row(status: AlertStatus, over: Partial<AlertRow> = {}): AlertRow {
  return {
    fingerprint: 'fp',
    job: 'runs',
    check: 'failed_runs',
    status,
    severity: 'warning',
    summary: 's',
    details: {},
    labels: { check: 'failed_runs' },
    url: null,
    since: null,
    subject: null,
    facts: [],
    brief: null,
    firstSeenAt: T0,
    lastSeenAt: T0,
    seenCount: 1,
    firedAt: status === 'pending' ? null : T0,
    lastNotifiedAt: status === 'pending' ? null : T0,
    resolvedAt: status === 'resolved' ? T0 : null,
    acknowledgement: null,
    ...over,
  };
}

/** Taken in the console an hour after it fired. */
const ACKED = { acknowledgement: { by: 'alice', via: 'console', at: T0 + HOUR, comment: null } } as const;

const OPTIONS_4H = { forCycles: 1, repeatIntervalMs: 4 * HOUR };

const present = (severity: Severity = 'warning', holdForMs?: number) =>
  finding('fp', holdForMs === undefined ? { severity } : { severity, holdForMs });

describe('decide', () => {
  it.each<
    [
      string,
      AlertRow | undefined,
      ReturnType<typeof present> | undefined,
      number,
      { forCycles: number; repeatIntervalMs: number },
      Decision,
    ]
  >([
    [
      'new finding, for 1',
      undefined,
      present(),
      T0,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'fire', reason: 'first sighting' },
    ],
    [
      'new finding, for 3',
      undefined,
      present(),
      T0,
      { forCycles: 3, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'seen 1 of 3 cycles' },
    ],
    [
      'pending, second sighting of 3',
      row('pending', { seenCount: 1 }),
      present(),
      T0 + MINUTE,
      { forCycles: 3, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'seen 2 of 3 cycles' },
    ],
    [
      'pending, third sighting of 3',
      row('pending', { seenCount: 2 }),
      present(),
      T0 + 2 * MINUTE,
      { forCycles: 3, repeatIntervalMs: 4 * HOUR },
      { action: 'fire', reason: 'seen for 3 cycles' },
    ],
    [
      'new finding with a hold',
      undefined,
      present('warning', 30 * MINUTE),
      T0,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'held 0s of 30m' },
    ],
    [
      'pending, hold not over',
      row('pending', { seenCount: 5 }),
      present('warning', 30 * MINUTE),
      T0 + 29 * MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'held 29m of 30m' },
    ],
    [
      'pending, hold not over by less than a second (the time held is never rounded up to the hold)',
      row('pending', { seenCount: 5 }),
      present('warning', 30 * MINUTE),
      T0 + 30 * MINUTE - 400,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'held 29m59s of 30m' },
    ],
    [
      'pending, hold over',
      row('pending', { seenCount: 5 }),
      present('warning', 30 * MINUTE),
      T0 + 30 * MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'fire', reason: 'held for 30m' },
    ],
    [
      'pending, hold over but cycles not',
      row('pending', { seenCount: 1 }),
      present('warning', MINUTE),
      T0 + 5 * MINUTE,
      { forCycles: 3, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'seen 2 of 3 cycles' },
    ],
    [
      'pending gone',
      row('pending'),
      undefined,
      T0 + MINUTE,
      { forCycles: 3, repeatIntervalMs: 4 * HOUR },
      { action: 'drop', reason: 'gone before it fired' },
    ],
    [
      'firing, unchanged',
      row('firing'),
      present(),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'still firing' },
    ],
    [
      'firing, severity rose',
      row('firing'),
      present('critical'),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'escalate', reason: 'severity rose warning→critical' },
    ],
    [
      'firing, severity rose and repeat due: escalation wins',
      row('firing'),
      present('critical'),
      T0 + 5 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'escalate', reason: 'severity rose warning→critical' },
    ],
    [
      'firing, severity fell',
      row('firing', { severity: 'critical' }),
      present('warning'),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'severity fell critical→warning' },
    ],
    [
      'firing, repeat not yet due',
      row('firing'),
      present(),
      T0 + 4 * HOUR - 1,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'still firing' },
    ],
    [
      'firing, repeat due',
      row('firing'),
      present(),
      T0 + 4 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'repeat', reason: 'repeat interval elapsed' },
    ],
    [
      'firing, repeat measured from the last announcement',
      row('firing', { lastNotifiedAt: T0 + 2 * HOUR }),
      present(),
      T0 + 5 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'still firing' },
    ],
    [
      'firing, repeat disabled',
      row('firing'),
      present(),
      T0 + 1000 * HOUR,
      { forCycles: 1, repeatIntervalMs: Infinity },
      { action: 'none', reason: 'still firing' },
    ],
    [
      'firing, acknowledged, repeat due: no repeat',
      row('firing', ACKED),
      present(),
      T0 + 4 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'acknowledged' },
    ],
    [
      'firing, acknowledged, long past the repeat interval: still none',
      row('firing', ACKED),
      present(),
      T0 + 100 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'acknowledged' },
    ],
    [
      'firing, acknowledged, repeat not yet due',
      row('firing', ACKED),
      present(),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'still firing' },
    ],
    [
      'firing, acknowledged, severity rose: escalates (the lifecycle ends the acknowledgement)',
      row('firing', ACKED),
      present('critical'),
      T0 + 5 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'escalate', reason: 'severity rose warning→critical' },
    ],
    [
      'firing, acknowledged, gone: resolves (the lifecycle ends the acknowledgement)',
      row('firing', ACKED),
      undefined,
      T0 + 5 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'resolve', reason: 'absent from complete snapshot' },
    ],
    [
      'firing, its run retried (under way): stays open, announces nothing',
      row('firing'),
      finding('fp', { severity: 'warning', underway: true }),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'retry under way' },
    ],
    [
      'firing, its retry under way past the repeat interval: no reminder',
      row('firing'),
      finding('fp', { severity: 'warning', underway: true }),
      T0 + 5 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'retry under way' },
    ],
    [
      'new, a retry under way: does not fire on it',
      undefined,
      finding('fp', { severity: 'warning', underway: true }),
      T0,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'retry under way' },
    ],
    [
      'pending past its hold, a retry under way: keeps waiting',
      row('pending', { seenCount: 5 }),
      finding('fp', { severity: 'warning', underway: true, holdForMs: MINUTE }),
      T0 + HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'retry under way' },
    ],
    [
      'firing, the retry failed: escalates at the same severity',
      row('firing'),
      finding('fp', { severity: 'warning', escalation: 'retry failed' }),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'escalate', reason: 'retry failed' },
    ],
    [
      'firing and acknowledged, the retry failed: escalates (news to whoever took it)',
      row('firing', ACKED),
      finding('fp', { severity: 'warning', escalation: 'retry failed' }),
      T0 + 2 * HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'escalate', reason: 'retry failed' },
    ],
    [
      'pending, the retry failed: fires, its first announcement',
      row('pending', { seenCount: 1 }),
      finding('fp', { severity: 'warning', escalation: 'retry failed' }),
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'fire', reason: 'seen for 2 cycles' },
    ],
    [
      'firing gone',
      row('firing'),
      undefined,
      T0 + MINUTE,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'resolve', reason: 'absent from complete snapshot' },
    ],
    [
      'resolved and back: a new life',
      row('resolved', { seenCount: 9 }),
      present(),
      T0 + HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'fire', reason: 'first sighting' },
    ],
    [
      'resolved and back, for 2: pends again',
      row('resolved', { seenCount: 9 }),
      present(),
      T0 + HOUR,
      { forCycles: 2, repeatIntervalMs: 4 * HOUR },
      { action: 'pend', reason: 'seen 1 of 2 cycles' },
    ],
    [
      'resolved and still absent',
      row('resolved'),
      undefined,
      T0 + HOUR,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'not open' },
    ],
    [
      'never seen and absent',
      undefined,
      undefined,
      T0,
      { forCycles: 1, repeatIntervalMs: 4 * HOUR },
      { action: 'none', reason: 'not open' },
    ],
  ])('%s', (_name, previous, current, now, options, expected) => {
    expect(decide(previous, current, now, options)).toEqual(expected);
  });

  it.each<[string, Severity, Severity, Decision]>([
    [
      'rose back to what was told',
      'critical',
      'critical',
      { action: 'none', reason: 'severity back to critical, as told before' },
    ],
    ['rose above what was told', 'warning', 'critical', { action: 'escalate', reason: 'severity rose info→critical' }],
    ['rose, told at worst info', 'info', 'warning', { action: 'escalate', reason: 'severity rose info→warning' }],
  ])('firing at info after a fall, %s', (_name, told, now, expected) => {
    expect(decide(row('firing', { severity: 'info' }), present(now), T0 + MINUTE, OPTIONS_4H, told)).toEqual(expected);
  });
});
