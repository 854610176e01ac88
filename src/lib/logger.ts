import { pino, type Logger, type DestinationStream } from 'pino';
import { loadOnUse } from './load-on-use.js';

export type { Logger } from 'pino';

/** pino-pretty, loaded by the pretty format alone (a daemon logs JSON lines). */
const pinoPretty = loadOnUse<typeof import('pino-pretty')>('pino-pretty');

/**
 * Paths pino blanks out wherever they appear in a log object. Secrets are also `Secret` objects
 * that render as `<secret>`; this is the second belt for plain strings that slip through.
 */
export const REDACT_PATHS = [
  // Each at the top of the log object and one level down.
  ...['token', 'authorization', 'headers.authorization', 'webhook_url', 'password'].flatMap((p) => [p, `*.${p}`]),
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
  /**
   * The least level written for the lines of one component (a child logger bound with
   * `{ component }`, see {@link COMPONENT}), above the logger's own: the demo keeps the job overruns
   * of its few-second beat off its user's screen this way.
   */
  componentLevels?: Readonly<Record<string, string>>;
}

/** The binding that names a component whose level {@link LoggerOptions.componentLevels} may raise. */
export const COMPONENT = 'component';

/**
 * In a serialised line: a JSON escape (`\u001b`, `\n`, `\\`, …), or a character JSON leaves raw
 * that a terminal obeys or a reader cannot see (C1 controls, bidi and zero-width characters).
 */
const LINE_HAZARD = /\\(?:u([0-9a-fA-F]{4})|(.))|([\u0080-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff])/g;

/**
 * The text from outside in a log line, written so a terminal shows it instead of obeying it: an
 * app named with a right-to-left override, or a reason holding an escape sequence, reaches
 * `kubectl logs` escaped. JSON lines keep valid JSON that parses back to the same values (the
 * hazards as `\uXXXX` escapes); for the pretty format, which prints parsed values raw, the
 * hazards and control characters become the visible text `\u{202e}` (`lib/visible-text.ts`).
 */
export function escapeLogLine(line: string, format: 'json' | 'pretty'): string {
  return line.replace(LINE_HAZARD, (match, hex: string | undefined, _single, raw: string | undefined) => {
    if (raw !== undefined) {
      const code = raw.charCodeAt(0).toString(16).padStart(4, '0');
      return format === 'json' ? `\\u${code}` : `\\\\u{${raw.charCodeAt(0).toString(16)}}`;
    }
    // A JSON escape: as it is in JSON lines; for pretty, a control one (an escape sequence, a
    // carriage return) becomes visible text, so a value cannot colour the terminal or overwrite a
    // line. A line break stays: pretty indents a value's lines, and a stack trace reads as one.
    if (format === 'json') return match;
    const code = hex !== undefined ? parseInt(hex, 16) : match === '\\r' ? 13 : -1;
    return code >= 0 && code < 0x20 && code !== 0x0a && code !== 0x09 ? `\\\\u{${code.toString(16)}}` : match;
  });
}

/**
 * An `err` field as logged: an error that says what went wrong in its own `toJSON()` (the API
 * client's: a refused token, a service that does not answer) by those fields, without a stack that
 * tells an operator nothing; any other with pino's standard fields, its stack included (a bug's
 * trace is what finds it).
 */
function serializeErr(err: unknown): unknown {
  if (err instanceof Error && typeof (err as { toJSON?: unknown }).toJSON === 'function') {
    return (err as Error & { toJSON(): unknown }).toJSON();
  }
  return err instanceof Error ? pino.stdSerializers.err(err) : err;
}

/** Builds the process logger: JSON lines, readable on a terminal, secrets redacted. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const base = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '<secret>' },
    base: undefined,
    serializers: { err: serializeErr },
    hooks: {
      streamWrite: (line: string) => escapeLogLine(line, format),
      ...(options.componentLevels ? { logMethod: componentFilter(options.componentLevels) } : {}),
    },
  };
  if (format === 'pretty') {
    // pino-pretty as a synchronous stream (no worker thread), so a crash loses no line.
    const stream = pinoPretty()({ colorize: true, sync: true, destination: options.destination ?? 1 });
    return pino(base, stream);
  }
  return options.destination ? pino(base, options.destination) : pino(base);
}

/** pino's `logMethod` hook that drops a line under its component's least level. */
function componentFilter(levels: Readonly<Record<string, string>>) {
  const least = new Map(Object.entries(levels).map(([component, level]) => [component, levelValue(level)]));
  return function (this: Logger, args: Parameters<Logger['info']>, write: (...a: unknown[]) => void, level: number) {
    const component = this.bindings()[COMPONENT] as unknown;
    if (typeof component === 'string' && level < (least.get(component) ?? 0)) return;
    write.apply(this, args);
  };
}

function levelValue(level: string): number {
  const value = pino.levels.values[level];
  if (value === undefined) throw new Error(`unknown log level ${JSON.stringify(level)}`);
  return value;
}

/** A logger that writes nothing, for code paths where no logger was given. */
export const silentLogger: Logger = pino({ level: 'silent' });
