import cron from 'node-cron';
import { z } from 'zod';

/** What a schedule looks like, for error messages. */
export const CRON_HINT =
  'a cron expression of 5 fields (minute hour day month weekday) or 6 (with seconds first), e.g. "*/5 * * * *", or @hourly, @daily, @weekly, @monthly or @yearly';

/**
 * The macros of Vixie cron and the expression each stands for. Translated here rather than left
 * to the scheduler, so every reader of the config (the scheduler, `jobs.deadline: auto`, the
 * maintenance estimate) sees plain fields.
 */
const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Each field as node-cron names it in its validation: what people call it, and what it takes. */
const FIELDS: Readonly<Record<string, { name: string; takes: string }>> = {
  second: { name: 'second', takes: '0-59' },
  minute: { name: 'minute', takes: '0-59' },
  hour: { name: 'hour', takes: '0-23' },
  dayOfMonth: { name: 'day-of-month', takes: '1-31' },
  month: { name: 'month', takes: '1-12 or jan-dec' },
  dayOfWeek: { name: 'weekday', takes: '0-7 (0 and 7 are Sunday) or sun-sat' },
};

/** How a field may be written, said after what it takes. */
const FIELD_FORMS = 'a value, a range a-b, a list a,b, a step */n or a-b/n, or *';

/** A schedule checked: the plain expression to run, or why it cannot be one. */
export type CheckedSchedule = { ok: true; expression: string } | { ok: false; message: string };

/**
 * Checks a cron expression as node-cron will run it (5 fields, or 6 with a leading seconds field)
 * or a macro (`@hourly` … `@yearly`, translated to its fields), saying which field is wrong and
 * what it takes: `the minute field is "60", and minute takes 0-59`.
 */
export function checkSchedule(text: string): CheckedSchedule {
  const expression = text.trim().replace(/\s+/g, ' ');
  if (expression.startsWith('@')) {
    const fields = MACROS[expression.toLowerCase()];
    if (fields) return { ok: true, expression: fields };
    return {
      ok: false,
      message: `"${expression}" is not a macro this scheduler knows (@hourly, @daily, @weekly, @monthly, @yearly)`,
    };
  }
  const count = expression === '' ? 0 : expression.split(' ').length;
  if (count !== 5 && count !== 6) {
    return { ok: false, message: `has ${count} field${count === 1 ? '' : 's'}; must be ${CRON_HINT}` };
  }
  const { errors } = cron.validateDetailed(expression);
  const first = errors[0];
  if (!first) return { ok: true, expression };
  const field = FIELDS[first.field];
  if (!field) return { ok: false, message: `must be ${CRON_HINT} (${first.message})` };
  // node-cron reports a day no month in the expression has (31 in February) on the day field.
  if (/impossible/.test(first.message)) {
    return { ok: false, message: `the day-of-month field "${first.value}" names a day none of its months has` };
  }
  return {
    ok: false,
    message: `the ${field.name} field is "${first.value}", and ${field.name} takes ${field.takes} (${FIELD_FORMS})`,
  };
}

/**
 * Config schema of a job schedule: `off` (null: the job does not run) or a schedule
 * {@link checkSchedule} accepts, checked at load so a typo fails `validate` instead of the first
 * tick, and parsed to its plain fields.
 */
export const scheduleSchema = z
  .string({ error: `must be "off" or ${CRON_HINT}` })
  // For editors (config.schema.json): the shape alone, 5 or 6 fields, a macro or off; the fields
  // themselves are checked by validate.
  .meta({ pattern: String.raw`^\s*(?:off|@[A-Za-z]+|\S+(?:\s+\S+){4,5})\s*$` })
  .transform((text, ctx): string | null => {
    if (text.trim() === 'off') return null;
    const checked = checkSchedule(text);
    if (checked.ok) return checked.expression;
    ctx.addIssue({ code: 'custom', message: checked.message });
    return z.NEVER;
  });
