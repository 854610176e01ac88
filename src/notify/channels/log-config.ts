import type { z } from 'zod';
import { kindConfigSchema } from './kind-config-schema.js';

/** Config of the log channel: events go to the process log (useful alone, in dry runs and the demo). */
export const logConfigSchema = kindConfigSchema('log', {});

/** A parsed log channel config. */
export type LogConfig = z.infer<typeof logConfigSchema>;
