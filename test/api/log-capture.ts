/**
 * Captures every line a pino logger writes, at debug level, into memory: for tests that assert
 * what is logged (and what never is).
 */
import { createLogger, type Logger } from '../../src/lib/logger.js';

/** A debug-level JSON logger writing into `lines`. */
export function captureLogs(): { logger: Logger; lines: string[]; records: () => Record<string, unknown>[] } {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    destination: { write: (s: string) => void lines.push(s) },
  });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}
