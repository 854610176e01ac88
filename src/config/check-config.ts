/**
 * The building blocks of a `checks.<name>` section, shared by every check's schema (each in its own
 * module under `src/detectors/`), so every check switches off and lists its state words the same way.
 */
import { z } from 'zod';
import { nonEmptySchema } from './schema-blocks.js';

/** `enabled`, on unless switched off. */
export const enabledSchema = z.boolean().default(true).describe('Run this check.');

/** `enabled` of a check that is off unless switched on, saying `why` it is off by default. */
export const offByDefaultSchema = (why: string) =>
  z.boolean().default(false).describe(`Run this check. Off by default: ${why}`);

/**
 * A check's `checks.<name>` section: `enabled` and the check's own keys, strict (a typo is an
 * error), with every default filled when the section is left out.
 */
export const checkConfig = <F extends z.ZodRawShape>(fields: F) =>
  z
    .strictObject({ enabled: enabledSchema, ...fields })
    // An empty section takes every default: a check's keys all have one (else loading says which is missing).
    .prefault({} as never);

/** A list of the service's state words, at least one, defaulting to `defaults`. */
export const stateListSchema = (defaults: readonly string[]) =>
  z
    .array(nonEmptySchema)
    .min(1, 'must list at least one state')
    .default([...defaults]);

/** A list of words (states, names), none of them empty, defaulting to `defaults`; may be empty. */
export const wordListSchema = (defaults: readonly string[]) => z.array(nonEmptySchema).default([...defaults]);

/**
 * The state words a check knows and does not alert on (`other_states`), defaulting to `defaults`;
 * may be empty. They only keep the daemon from warning that the service speaks a word it does not know.
 */
export const otherStatesSchema = (defaults: readonly string[], what: string) =>
  wordListSchema(defaults).describe(
    `${what} states that need no alert. A state the service reports that no list of checks.* names is warned about once, since it may be a problem in words the daemon was not told.`,
  );
