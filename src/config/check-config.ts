/**
 * The building blocks of a `checks.<name>` section, shared by every check's schema (each in its own
 * module under `src/detectors/`), so every check switches off and lists its state words the same way.
 */
import { z } from 'zod';

/** `enabled`, on unless switched off. */
export const enabledSchema = z.boolean().default(true).describe('Run this check.');

/** A list of the service's state words, at least one, defaulting to `defaults`. */
export const stateListSchema = (defaults: readonly string[]) =>
  z
    .array(z.string().min(1, 'must not be empty'))
    .min(1, 'must list at least one state')
    .default([...defaults]);
