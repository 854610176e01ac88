import cron from 'node-cron';
import { z } from 'zod';

/** What a schedule looks like, for error messages. */
export const CRON_HINT =
  'a cron expression of 5 fields (minute hour day month weekday) or 6 (with seconds first), e.g. "*/5 * * * *"';

/**
 * Config schema of a job schedule: a cron expression node-cron accepts (5 fields, or 6 with a
 * leading seconds field), checked at load so a typo fails `validate` instead of the first tick.
 * Combine with `offOr` to allow switching a job off.
 */
export const cronSchema = z
  .string({ error: `must be ${CRON_HINT}` })
  .trim()
  .refine((expr) => {
    const fields = expr.split(/\s+/).length;
    return (fields === 5 || fields === 6) && cron.validate(expr);
  }, `must be ${CRON_HINT}`);
