/**
 * `notify.context`: what the API is asked about a new alert after the cycle that raised it (the log
 * around a failed run, the restore point of a failed update or upgrade), and how long its message
 * waits for the answer. The words that choose a log and the actions with restore points are the
 * service's own, so they are config with the simulator's (and the reference's) as defaults.
 */
import { z } from 'zod';
import { LOG_SOURCES } from '../api/schemas.js';
import { durationSchema } from './duration.js';
import { nonEmptySchema, wholeNumberSchema } from './schema-blocks.js';
import { wordListSchema } from './check-config.js';

/** A log `logs.tail` reads, as the reference names them. */
const logSourceSchema = z.enum(LOG_SOURCES, { error: `must be one of ${LOG_SOURCES.join(', ')}` });

/** The log of a run by its workflow or action, where it is not the application log (`main`). */
const DEFAULT_LOG_SOURCES: Record<string, (typeof LOG_SOURCES)[number]> = {
  deploy: 'setup',
  update: 'setup',
  update_modules: 'setup',
  backup: 'backup',
  restore: 'restore',
  upgrade: 'upgrade',
};

/** `notify.context.logs`. */
const logsSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Read the log around a failed run (logs.tail; needs view_logs).'),
    lines: wholeNumberSchema(1, 50).default(8).describe('Log lines shown at most, error lines first.'),
    width: wholeNumberSchema(40, 1000)
      .default(160)
      .describe('Longest log line shown, in characters; a longer one is cut with "…".'),
    lead: durationSchema
      .refine((ms) => ms >= 0 && ms <= 3_600_000, 'must be at most 1h')
      .prefault('5m')
      .describe(
        "How far before the failure the log is read: logs.tail's since is the time from then to now, within the 30s to 24h the reference allows.",
      ),
    sources: z
      .record(z.string().min(1), logSourceSchema)
      .prefault(DEFAULT_LOG_SOURCES)
      .describe(
        "The log of a run by its workflow or action (the workflow's word first); any other run's is the application log, main. Given, it replaces the default map (deploy, update and update_modules: setup; backup; restore; upgrade).",
      ),
    error_words: z
      .array(nonEmptySchema)
      .min(1, 'must list at least one word')
      .default(['error', 'critical', 'fatal', 'traceback', 'exception', 'failed', 'failure'])
      .describe('A log line holding one of these words (any case, as a whole word) is an error line, shown first.'),
  })
  .prefault({});

/** `notify.context.restore_points`. */
const restorePointsSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Read the restore point of a failed update or upgrade (restore_points.list).'),
    actions: wordListSchema(['update', 'update_modules', 'upgrade']).describe(
      'Run actions that make a restore point: a failed run of one of them is told with its own.',
    ),
  })
  .prefault({});

/** `notify.context`. */
export const contextConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Ask the API about each new alert of a failed run after the cycle: its log and its restore point.'),
    wait: durationSchema
      .refine((ms) => ms <= 600_000, 'must be at most 10m')
      .prefault('30s')
      .describe(
        "How long a new alert's notification waits for its context; then it goes without (and says nothing of it), never later.",
      ),
    concurrency: wholeNumberSchema(1, 8)
      .default(2)
      .describe('Alerts whose context is read at once (within the API rate limit every job shares).'),
    max_per_pass: wholeNumberSchema(1, 1000)
      .default(20)
      .describe('Alerts whose context one pass reads at most; the rest wait for the next pass (and may go without).'),
    logs: logsSchema,
    restore_points: restorePointsSchema,
  })
  .prefault({})
  .describe(
    'What the API adds to a new alert after the cycle that raised it, read off the cycle, once per run, kept in the state file.',
  );

/** `notify.context` as parsed (durations in ms). */
export type ContextSettings = z.output<typeof contextConfigSchema>;
