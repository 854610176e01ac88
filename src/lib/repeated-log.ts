/**
 * A log line that repeats is said once per interval, with a count: the first occurrence at once,
 * the next ones counted, and the first one after the interval said again as "… (repeated 1,234
 * times in the last 60 s)". The interval is `log.repeat_every` (one minute by default). Lines are
 * the same when their message and their error's code are (a Node or SQLite `code`, a
 * `StoreError`'s reason, else the error's name): an outage that fails every pass of every loop
 * with ECONNREFUSED is a few lines a minute, not a stream, while a different failure under the
 * same message is said at once.
 *
 * A wrapper of the loops' pino logger for their error lines (`warn`, `error`), timed on the
 * daemon's Clock so tests count lines on a fake one.
 */
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';

/** Options of {@link RepeatedLog}. */
export interface RepeatedLogOptions {
  clock: Pick<Clock, 'now'>;
  /** How many distinct lines are remembered; past it the oldest is forgotten (default 200). */
  maxKeys?: number;
}

/**
 * The fields of a log line. Its code is `code` when given (for an `err` already turned into text),
 * else `err`'s ({@link errorCode}).
 */
export type LogFields = Record<string, unknown> & { err?: unknown; code?: unknown };

type Level = 'warn' | 'error';

interface Seen {
  /** When the line was last said. */
  saidAt: number;
  /** Occurrences since then that were not said. */
  held: number;
  /** The last of them, said with the count at {@link RepeatedLog.flush}. */
  last: { level: Level; fields: LogFields; msg: string };
}

const DEFAULT_MAX_KEYS = 200;
/**
 * How often one line may be said, for every RepeatedLog: `log.repeat_every`, set as the daemon
 * starts and at each reload (60 s until then).
 */
let processIntervalMs = 60_000;

/**
 * Sets how often any one repeated line is said, for every RepeatedLog, those made before it too
 * (read at each line: a reload's new value reaches the loops already running): the daemon's
 * `log.repeat_every`, a policy of its whole log as the level is, applied where the logger is made
 * rather than passed to each of the loops that log.
 */
export function setRepeatInterval(ms: number): void {
  processIntervalMs = Math.max(1, ms);
}

/** What {@link RepeatedLog} says its lines through: a pino logger, or a thread's stand-in for one. */
export interface LineLogger {
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/** A logger's warn and error lines, each said at most once per interval with a count of the rest. */
export class RepeatedLog {
  readonly #logger: LineLogger;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #maxKeys: number;
  readonly #seen = new Map<string, Seen>();

  constructor(logger: LineLogger | Logger, options: RepeatedLogOptions) {
    this.#logger = logger;
    this.#clock = options.clock;
    this.#maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  }

  /**
   * A warning, said now unless the same one was said within the interval. `distinct` tells apart
   * lines of one message and code that must not count as one (one loop's from another's).
   */
  warn(fields: LogFields, msg: string, distinct = ''): void {
    this.#log('warn', fields, msg, distinct);
  }

  /** An error, said now unless the same one was said within the interval (`distinct`: see {@link warn}). */
  error(fields: LogFields, msg: string, distinct = ''): void {
    this.#log('error', fields, msg, distinct);
  }

  /**
   * Says the count of every line held since it was last said (a loop that recovered, or stops),
   * and forgets them: the next occurrence is said at once.
   */
  flush(): void {
    const now = this.#clock.now();
    for (const seen of this.#seen.values()) {
      if (seen.held > 0) this.#say(seen.last, seen.held, now - seen.saidAt);
    }
    this.#seen.clear();
  }

  #log(level: Level, fields: LogFields, msg: string, distinct: string): void {
    const now = this.#clock.now();
    const code = typeof fields.code === 'string' ? fields.code : errorCode(fields.err);
    const key = `${msg}\u0000${code}\u0000${distinct}`;
    const seen = this.#seen.get(key);
    const line = { level, fields, msg };
    if (seen && now - seen.saidAt < processIntervalMs) {
      seen.held += 1;
      seen.last = line;
      return;
    }
    // Counted with this one: the occurrences since the line was last said.
    this.#say(line, seen && seen.held > 0 ? seen.held + 1 : 0, seen ? now - seen.saidAt : 0);
    // Re-inserted, so the map's first key is the one said longest ago: the one to forget.
    this.#seen.delete(key);
    this.#seen.set(key, { saidAt: now, held: 0, last: line });
    if (this.#seen.size > this.#maxKeys) this.#seen.delete(this.#seen.keys().next().value!);
  }

  #say(line: Seen['last'], times: number, sinceMs: number): void {
    if (times === 0) {
      this.#logger[line.level](line.fields, line.msg);
      return;
    }
    const seconds = Math.max(1, Math.round(sinceMs / 1000));
    this.#logger[line.level](
      { ...line.fields, repeated: times },
      `${line.msg} (repeated ${times.toLocaleString('en-US')} times in the last ${seconds} s)`,
    );
  }
}

/**
 * What tells one failure from another under the same message: its `code` (Node's ECONNREFUSED,
 * SQLite's SQLITE_CORRUPT), a `StoreError`'s reason, its cause's code, else its name.
 */
export function errorCode(err: unknown): string {
  if (err === undefined || err === null) return '';
  if (typeof err !== 'object') return typeof err;
  const e = err as { code?: unknown; reason?: unknown; name?: unknown; cause?: unknown };
  if (typeof e.code === 'string' || typeof e.code === 'number') return String(e.code);
  if (typeof e.reason === 'string') return e.reason;
  const cause = e.cause === undefined || e.cause === err ? '' : errorCode(e.cause);
  return cause || (typeof e.name === 'string' ? e.name : 'error');
}
