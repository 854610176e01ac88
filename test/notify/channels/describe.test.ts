/**
 * What describing takes from an event and from the registry: the facts and brief the event
 * carries (never worked out again from its details), times shown as times, and each check's noun.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, presentationOf } from '../../../src/detectors/registry.js';
import { describeEvent, describeHeadline } from '../../../src/notify/channels/describe.js';
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
