import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export type { Logger } from 'pino';

/**
 * Paths pino blanks out wherever they appear in a log object. Secrets are also `Secret` objects
 * that render as `<secret>`; this is the second belt for plain strings that slip through.
 */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'webhook_url',
  '*.webhook_url',
  'password',
  '*.password',
  '*.auth.pass',
  'smtp.auth.pass',
];

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  level?: string;
  /** `json` (default when not a terminal), `pretty` (default on a terminal). */
  format?: 'json' | 'pretty';
  /** Where to write; standard output by default. Tests pass a capture stream. */
  destination?: DestinationStream;
}

/** Builds the process logger: JSON lines, readable on a terminal, secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const base = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '<secret>' },
    base: undefined,
  };
  if (format === 'pretty') {
    // pino-pretty as a synchronous stream (no worker thread), so a crash loses no line.
    const stream = pretty({ colorize: true, sync: true, destination: options.destination ?? 1 });
    return pino(base, stream);
  }
  return options.destination ? pino(base, options.destination) : pino(base);
}

/** A logger that writes nothing, for code paths where no logger was given. */
export const silentLogger: Logger = pino({ level: 'silent' });
