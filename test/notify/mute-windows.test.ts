import { describe, expect, it } from 'vitest';
import { checkReferences } from '../../src/config/config-references.js';
import { compileMuteWindow } from '../../src/notify/mute-windows.js';
import { notifySchema } from '../../src/notify/notify-schema.js';
import type { MuteWindowSettings } from '../../src/notify/notify-settings.js';

const night: MuteWindowSettings = {
  name: 'night',
  time_zone: 'Europe/Berlin',
  times: [{ start: '22:00', end: '06:00' }],
};
const fridayNight: MuteWindowSettings = { ...night, name: 'friday-night', weekdays: ['friday'] };
const officeHours: MuteWindowSettings = {
  name: 'office',
  time_zone: 'America/New_York',
  weekdays: ['mon:fri'],
  times: [{ start: '09:00', end: '17:00' }],
};
const weekend: MuteWindowSettings = {
  name: 'weekend',
  time_zone: 'UTC',
  weekdays: ['saturday:sunday'],
  times: [{ start: '00:00', end: '24:00' }],
};

describe('compileMuteWindow', () => {
  // November 2026: Berlin is UTC+1, New York UTC-5. 6 Nov 2026 is a Friday.
  it.each<[string, MuteWindowSettings, string, boolean]>([
    ['night: 23:30 Berlin is inside', night, '2026-11-03T22:30:00Z', true],
    ['night: 05:59 Berlin (after midnight) is inside', night, '2026-11-04T04:59:00Z', true],
    ['night: 06:00 Berlin is outside (end excluded)', night, '2026-11-04T05:00:00Z', false],
    ['night: 21:59 Berlin is outside', night, '2026-11-03T20:59:00Z', false],
    ['night: 22:00 UTC is 23:00 Berlin, inside (zone applied)', night, '2026-11-03T22:00:00Z', true],
    ['night: 21:30 UTC is 22:30 Berlin, inside', night, '2026-11-03T21:30:00Z', true],
    ['friday night: Saturday 03:00 Berlin belongs to Friday', fridayNight, '2026-11-07T02:00:00Z', true],
    ['friday night: Friday 03:00 Berlin belongs to Thursday', fridayNight, '2026-11-06T02:00:00Z', false],
    ['friday night: Friday 23:00 Berlin', fridayNight, '2026-11-06T22:00:00Z', true],
    ['office: Friday 16:59 New York', officeHours, '2026-11-06T21:59:00Z', true],
    ['office: Friday 17:00 New York', officeHours, '2026-11-06T22:00:00Z', false],
    ['office: Saturday 12:00 New York', officeHours, '2026-11-07T17:00:00Z', false],
    ['office: Monday 09:00 New York is Monday 14:00 UTC', officeHours, '2026-11-02T14:00:00Z', true],
    ['weekend: Sunday 23:59 UTC', weekend, '2026-11-08T23:59:00Z', true],
    ['weekend: Monday 00:00 UTC', weekend, '2026-11-09T00:00:00Z', false],
  ])('%s', (_name, settings, at, expected) => {
    expect(compileMuteWindow(settings).isActive(Date.parse(at))).toBe(expected);
  });

  it('follows daylight saving time: 22:30 Berlin is 20:30 UTC in summer', () => {
    expect(compileMuteWindow(night).isActive(Date.parse('2026-07-01T20:30:00Z'))).toBe(true);
    expect(compileMuteWindow(night).isActive(Date.parse('2026-07-01T19:30:00Z'))).toBe(false);
  });
});

// The compile trusts the config: its schema and its reference checks refuse a window it cannot use.
describe('a mute window the config refuses', () => {
  it.each<[string, MuteWindowSettings, string, RegExp]>([
    ['unknown time zone', { ...night, time_zone: 'Mars/Olympus' }, '0.time_zone', /is not a known IANA time zone/],
    ['bad weekday', { ...night, weekdays: ['funday'] }, '0.weekdays.0', /must be a weekday/],
    ['bad time', { ...night, times: [{ start: '25:00', end: '06:00' }] }, '0.times.0.start', /must be a time of day/],
    ['equal start and end', { ...night, times: [{ start: '06:00', end: '06:00' }] }, '0.times.0.end', /must differ/],
    ['no times', { ...night, times: [] }, '0.times', /must list at least one time range/],
  ])('%s', (_name, settings, path, message) => {
    const parsed = notifySchema.safeParse({ mute_windows: [settings] });
    const issues = parsed.error?.issues.map((i) => ({ path: i.path.slice(1).join('.'), message: i.message }));
    expect(issues).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  it('a name defined twice', () => {
    expect(checkReferences({ notify: { mute_windows: [night, { ...night }] } })).toEqual([
      {
        path: ['notify', 'mute_windows', 1, 'name'],
        message: 'duplicate mute window name "night" (first used at index 0)',
      },
    ]);
  });
});
