import type { Writable } from 'node:stream';
import { createLogger, type Logger } from '../lib/logger.js';
import { setRepeatInterval } from '../lib/repeated-log.js';
import type { Config } from '../config/load-config.js';

/**
 * The logger of `run` and `check`, per `config.log`: JSON, or readable when asked or when `auto`
 * and the stream is a terminal. Secrets are redacted by `createLogger`. Sets how often a repeated
 * line is said (`log.repeat_every`) for the loops that log through `RepeatedLog`. A reload applies
 * `log.level` and `log.repeat_every` again through {@link daemonLogger.apply}; `log.format` stays
 * as the process started (its stream is made once).
 */
export function daemonLogger(config: Config, stream: Writable): Logger {
  const tty = (stream as Writable & { isTTY?: boolean }).isTTY === true;
  setRepeatInterval(config.log.repeat_every);
  const format = config.log.format === 'auto' ? (tty ? 'pretty' : 'json') : config.log.format;
  return createLogger({ level: config.log.level, format, destination: stream });
}

/**
 * Applies a reloaded `log.level` and `log.repeat_every` to a logger made by {@link daemonLogger}.
 * Its children follow the level (a pino child without a level of its own reads its parent's), and
 * every `RepeatedLog` reads the process's interval at each line.
 */
daemonLogger.apply = function apply(logger: Logger, log: Config['log']): void {
  setRepeatInterval(log.repeat_every);
  logger.level = log.level;
};
