/**
 * What describing takes from an event and from the registry: the facts and brief the event
 * carries (never worked out again from its details), times shown as times, and each check's noun.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, presentationOf } from '../../../src/detectors/registry.js';
import { describeAlerts, describeEvent, describeHeadline } from '../../../src/notify/channels/describe.js';
import { alertEvent, NOW } from './fixtures.js';

describe('describeEvent', () => {
  it('shows the facts and brief the event carries, not what its details would give', () => {
    const event = alertEvent({
      details: { run: '#123', step: 'install', reason: 'exit code 1' },
      facts: [{ label: 'Queue', value: 'nightly' }],
      brief: 'held in the nightly queue',
    });
    expect(describeEvent(event, NOW)).toMatchObject({
      facts: [{ label: 'Queue', value: 'nightly' }],
      brief: 'held in the nightly queue',
      briefIsSummary: false,
    });
  });

  it('shows the summary as the brief when the event carries none', () => {
    const event = alertEvent({ facts: [{ label: 'Run', value: '#123' }] });
    expect(describeEvent(event, NOW)).toMatchObject({ brief: event.summary, briefIsSummary: true });
  });

  it.each([
    ['2026-11-01T09:30:00Z', { label: 'Taken', value: '2026-11-01 09:30 UTC', at: Date.UTC(2026, 10, 1, 9, 30) }],
    [
      '2026-11-01T09:30:00.000+02:00',
      { label: 'Taken', value: '2026-11-01 07:30 UTC', at: Date.UTC(2026, 10, 1, 7, 30) },
    ],
    ['yesterday', { label: 'Taken', value: 'yesterday' }],
  ])('shows a time fact %s as %j', (value, shown) => {
    const event = alertEvent({ facts: [{ label: 'Taken', value, kind: 'time' }] });
    expect(describeEvent(event, NOW).facts).toEqual([shown]);
  });

  it('keeps a plain fact that looks like a time as written', () => {
    const event = alertEvent({ facts: [{ label: 'Note', value: '2026-11-01T09:30:00Z' }] });
    expect(describeEvent(event, NOW).facts).toEqual([{ label: 'Note', value: '2026-11-01T09:30:00Z' }]);
  });

  it('shows no facts for an event of a check no longer known that carries none', () => {
    const { facts: _none, ...event } = alertEvent();
    const shown = describeEvent({ ...event, check: 'retired_check' as never }, NOW);
    expect(shown).toMatchObject({ facts: [], brief: event.summary, briefIsSummary: true });
  });
});

describe('describeHeadline', () => {
  it.each(CHECK_NAMES.map((check) => [check, presentationOf(check)!.noun] as const))(
    'names %s findings by its registered noun %j',
    (check, [one, many]) => {
      const headline = (omitted: number) =>
        describeHeadline({ type: 'alerts', group: { check }, events: [], omitted }).what;
      expect([headline(1), headline(2)]).toEqual([one, many]);
    },
  );

  it('says "alerts" for a check no longer known and for mixed checks', () => {
    expect(describeHeadline({ type: 'alerts', group: { check: 'retired_check' }, events: [], omitted: 2 }).what).toBe(
      'alerts',
    );
    const mixed = [alertEvent(), alertEvent({ id: 2, check: 'stuck_runs', labels: { check: 'stuck_runs' } })];
    expect(describeHeadline({ type: 'alerts', group: {}, events: mixed, omitted: 0 }).what).toBe('alerts');
  });
});

describe('saying each thing once', () => {
  it.each<[string, string, { label: string; value: string; kind?: 'time' }[], string[]]>([
    [
      'a stale backup: the summary says the age and the limit',
      'No successful backup of shop (production) for 30h (max 26h)',
      [
        { label: 'Age', value: '30h' },
        { label: 'Max age', value: '26h' },
        { label: 'Backup', value: 'nightly (#12)' },
      ],
      ['Backup'],
    ],
    [
      "the service's backup health: the summary says the rating",
      'Backup health of shop (production) is critical',
      [
        { label: 'Health', value: 'critical' },
        { label: 'Last backup', value: '2026-10-31T06:00:00Z', kind: 'time' },
      ],
      ['Last backup'],
    ],
    [
      'a time the summary writes the same way',
      'Certificate of https://shop.example.com expires in 47h 59m (2026-11-03 11:59 UTC)',
      [{ label: 'Expires', value: '2026-11-03T11:59:00Z', kind: 'time' }],
      [],
    ],
    [
      'only whole phrases: "install" is not said by "reinstalled"',
      'Update of shop reinstalled nothing',
      [{ label: 'Step', value: 'install' }],
      ['Step'],
    ],
    ['values too short to tell', 'No backup: no', [{ label: 'Verified', value: 'no' }], ['Verified']],
  ])('%s', (_what, summary, facts, shown) => {
    expect(describeEvent(alertEvent({ summary, facts }), NOW).facts.map((f) => f.label)).toEqual(shown);
  });
});

describe('what a message is about, and where to see the rest', () => {
  const n = (events: ReturnType<typeof alertEvent>[], omitted = 0, group: Record<string, string> = {}) =>
    ({ type: 'alerts', group, events, omitted }) as const;
  it.each<[string, ReturnType<typeof n>, string | null]>([
    ['one alert: its app', n([alertEvent()]), 'shop'],
    [
      'one alert without an app: its server',
      n([alertEvent({ labels: { check: 'servers', server: 'web-01' } })]),
      'web-01',
    ],
    ['two alerts', n([alertEvent(), alertEvent({ id: 2 })]), null],
    ['one shown, more left out', n([alertEvent()], 3), null],
    ['grouped by app already', n([alertEvent()], 0, { app: 'shop' }), null],
  ])('%s → %j', (_what, notification, about) => {
    expect(describeHeadline(notification).about).toBe(about);
  });

  it('names the command that lists every open alert, with the config file the daemon runs on', () => {
    const d = describeAlerts(n([alertEvent()], 4), NOW, { commandConfigFile: '/srv/ops/watch dog.yaml' });
    expect(d.omittedCommand).toBe("deploy-watchdog alerts --config '/srv/ops/watch dog.yaml'");
    expect(describeAlerts(n([alertEvent()]), NOW).omittedCommand).toBeNull();
  });

  it('labels how long a firing alert has lasted, for a one-line form', () => {
    expect(describeEvent(alertEvent({ since: '2026-11-01T11:13:00Z' }), NOW).age).toBe('for 47m');
    expect(describeEvent(alertEvent({ since: '2026-11-01T11:59:30Z' }), NOW).age).toBeNull();
  });
});
