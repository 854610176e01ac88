import { z } from 'zod';

/** Config of the log channel: events go to the process log (useful alone, in dry runs and the demo). */
export const logConfigSchema = z
  .object({
    name: z.string().min(1, 'must not be empty'),
    type: z.literal('log'),
  })
  .strict();

/** A parsed log channel config. */
export type LogConfig = z.infer<typeof logConfigSchema>;
