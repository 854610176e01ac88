/**
 * The small schemas several sections of the config are built of: names, label names, regular
 * expressions and match values, so routes, silences and remediation policies read them alike.
 */
import { z } from 'zod';
import { compileLabelRegex } from '../lib/label-regex.js';

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A label name, as routes, policies and `group_by` use them. */
export const labelNameSchema = z
  .string()
  .regex(LABEL_NAME, 'is not a label name (letters, digits and _, not starting with a digit)');

/** A string with at least one character: a file name, a namespace, a word of the service's. */
export const nonEmptySchema = z.string().min(1, 'must not be empty');

/** A name other parts of the config refer to (channels, routes, mute windows, policies). */
export const nameSchema = nonEmptySchema
  .max(100, 'must be at most 100 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits, "_", "." and "-", starting with a letter or digit');

/**
 * A regular expression as routes and policies use it: compiled by the matchers' own engine (RE2,
 * `src/lib/label-regex.ts`) to catch a bad one at load.
 */
export const regexSchema = z.string().superRefine((source, ctx) => {
  try {
    compileLabelRegex(source);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `is not a regular expression RE2 takes (${(err as Error).message})` });
  }
});

/** One value or a list of values (any of them). */
export const matchValueSchema = z.union([z.string(), z.array(z.string()).min(1, 'must list at least one value')], {
  error: 'must be a string or a non-empty list of strings',
});

/** A whole number from `min` to `max`: the config's counts, sizes and limits. */
export function wholeNumberSchema(min: number, max: number) {
  return z.number().int().min(min).max(max);
}

/** Adds a problem at `path`, below the value a refinement checks, saying `message`. */
export function addProblem(ctx: z.RefinementCtx, path: PropertyKey[], message: string): void {
  ctx.addIssue({ code: 'custom', path, message });
}
