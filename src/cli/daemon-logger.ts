import type { Writable } from 'node:stream';
import { createLogger, type Logger } from '../lib/logger.js';
import type { Config } from '../config/load-config.js';

/**
 * The logger of `run` and `check`, per `config.log`: JSON, or readable when asked or when `auto`
 * and the stream is a terminal. Secrets are redacted by `createLogger`.
 */
export function daemonLogger(config: Config, stream: Writable): Logger {
  const tty = (stream as Writable & { isTTY?: boolean }).isTTY === true;
  const format = config.log.format === 'auto' ? (tty ? 'pretty' : 'json') : config.log.format;
  return createLogger({ level: config.log.level, format, destination: stream });
}
