import { z } from 'zod';

/**
 * The config schema of one channel kind in `notify.channels`: its `name`, its literal `type` (what
 * the registry's union is chosen by), then its own keys; strict, so a misspelt key is refused at
 * load instead of being ignored.
 */
export function kindConfigSchema<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.strictObject({ name: z.string().min(1, 'must not be empty'), type: z.literal(type), ...shape });
}
