/** Job schedules: cron expressions checked field by field, and the macros of Vixie cron. */
import { describe, expect, it } from 'vitest';
import { checkSchedule, scheduleSchema } from '../../src/config/cron.js';

describe('checkSchedule', () => {
  it.each([
    ['*/5 * * * *', '*/5 * * * *'],
    ['0  9 * *  mon-fri', '0 9 * * mon-fri'],
    ['*/30 * * * * *', '*/30 * * * * *'],
    ['@hourly', '0 * * * *'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@weekly', '0 0 * * 0'],
    ['@monthly', '0 0 1 * *'],
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
    ['@Daily', '0 0 * * *'],
  ])('takes %j as %j', (text, expression) => {
    expect(checkSchedule(text)).toEqual({ ok: true, expression });
  });

  it.each([
    ['60 * * * *', 'the minute field is "60", and minute takes 0-59'],
    ['1,2,60 * * * *', 'the minute field is "1,2,60", and minute takes 0-59'],
    ['*/0 * * * *', 'the minute field is "*/0", and minute takes 0-59'],
    ['0 24 * * *', 'the hour field is "24", and hour takes 0-23'],
    ['0 0 0 * *', 'the day-of-month field is "0", and day-of-month takes 1-31'],
    ['0 0 1 13 *', 'the month field is "13", and month takes 1-12 or jan-dec'],
    ['0 0 * * 8', 'the weekday field is "8", and weekday takes 0-7 (0 and 7 are Sunday) or sun-sat'],
    ['61 * * * * *', 'the second field is "61", and second takes 0-59'],
    ['0 0 31 2 *', 'the day-of-month field "31" names a day none of its months has'],
    ['*/15 * *', 'has 3 fields; must be a cron expression of 5 fields'],
    ['', 'has 0 fields'],
    ['@reboot', '"@reboot" is not a macro this scheduler knows (@hourly, @daily, @weekly, @monthly, @yearly)'],
  ])('refuses %j, saying %j', (text, message) => {
    const checked = checkSchedule(text);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.message).toContain(message);
  });
});

describe('scheduleSchema', () => {
  it.each([
    ['off', null],
    [' off ', null],
    ['@hourly', '0 * * * *'],
    ['*/1 * * * *', '*/1 * * * *'],
  ])('parses %j to %j', (text, parsed) => {
    expect(scheduleSchema.parse(text)).toBe(parsed);
  });

  it('gives one issue naming the field', () => {
    const result = scheduleSchema.safeParse('60 * * * *');
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.message)).toEqual([
      'the minute field is "60", and minute takes 0-59 (a value, a range a-b, a list a,b, a step */n or a-b/n, or *)',
    ]);
  });
});
