/**
 * What of a failed run's log is shown, decided without I/O: which log (`logs.tail`'s `source`, by
 * the run's workflow or action), how far back to ask (`since`, within the reference's 30s to
 * 24h), and which lines of the answer: those around the failure, error lines first, a few, each cut
 * cleanly to a width. A log line is hostile text: control characters (a terminal's escape
 * sequences, line breaks) are folded to a space here, and each renderer escapes the rest for its
 * medium.
 */
import type { LogSource, LogTail } from '../api/schemas.js';
import type { ContextSettings } from '../config/context-config.js';
import type { RunContextAsk } from '../detectors/run-context.js';
import type { ContextLogLine } from '../lib/alert-vocabulary.js';
import { parseTime } from '../lib/parse-time.js';

/** The shortest and longest look-back `logs.tail` takes (reference §4, §8). */
const SINCE_MIN_S = 30;
const SINCE_MAX_S = 24 * 3600;

/** Lines logged this long after the run's failure time still belong to it (the log may lag the run). */
export const AFTER_FAILURE_MS = 60_000;

/** The log of a run: by its workflow, else its action, in `sources`; any other run's is the application log. */
export function logSourceOf(
  ask: Pick<RunContextAsk, 'workflow' | 'action'>,
  sources: Readonly<Record<string, LogSource>>,
): LogSource {
  return sources[ask.workflow] ?? sources[ask.action] ?? 'main';
}

/**
 * `since` for a failure at `failedAt`, `leadMs` before it and up to now: whole minutes (whole
 * hours when exact), within 30s and 24h. Undefined when the failure time is unknown: the service's
 * default (1h) is asked.
 */
export function logSince(failedAt: number | null, now: number, leadMs: number): string | undefined {
  if (failedAt === null) return undefined;
  const seconds = Math.ceil(Math.max(0, now - failedAt + leadMs) / 1000);
  if (seconds <= SINCE_MIN_S) return `${SINCE_MIN_S}s`;
  if (seconds >= SINCE_MAX_S) return `${SINCE_MAX_S / 3600}h`;
  const minutes = Math.ceil(seconds / 60);
  return minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}m`;
}

/**
 * How an excerpt is made: `notify.context.logs`' lines shown at most, longest line (in code
 * points) and words that make a line an error line (any case, whole words).
 */
export interface ExcerptOptions extends Pick<ContextSettings['logs'], 'lines' | 'width' | 'error_words'> {
  /** When the run failed (ms); lines after it (past {@link AFTER_FAILURE_MS}) are not about it. Null: unknown. */
  failedAt: number | null;
}

/**
 * The lines shown of a `logs.tail` answer (newest last): of those logged up to the failure (lines
 * whose time cannot be read are kept), the newest error lines, then the newest others, `lines` in
 * all; shown errors first, each group in the order logged. `matched` counts the lines around the
 * failure, so a reader knows how many were left out.
 */
export function logExcerpt(
  items: LogTail['items'],
  options: ExcerptOptions,
): { lines: ContextLogLine[]; matched: number } {
  const isError = errorTest(options.error_words);
  const until = options.failedAt === null ? Infinity : options.failedAt + AFTER_FAILURE_MS;
  const around = items.filter((item) => (parseTime(item.time) ?? -Infinity) <= until);
  const marked = around.map((item) => ({ item, error: isError(item.line) }));
  const errors = marked.filter((m) => m.error).slice(-options.lines);
  const room = options.lines - errors.length;
  const others = room > 0 ? marked.filter((m) => !m.error).slice(-room) : [];
  const shown = [...errors, ...others];
  return {
    lines: shown.map(({ item, error }) => ({ time: item.time, line: cutLine(item.line, options.width), error })),
    matched: around.length,
  };
}

/** Runs of control characters (C0, DEL, C1, line and paragraph separators): one space each. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL_RUN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * A log line on one line and at most `width` code points: control characters folded to a space,
 * trailing space dropped, cut with "…" between code points (never inside a surrogate pair, so an
 * emoji is kept or dropped whole).
 */
export function cutLine(line: string, width: number): string {
  const chars = Array.from(line.replace(CONTROL_RUN, ' ').trimEnd());
  return chars.length <= width ? chars.join('') : `${chars.slice(0, width - 1).join('')}…`;
}

/** Whether a line holds one of the words, any case, as a whole word. */
function errorTest(words: readonly string[]): (line: string) => boolean {
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join('|')})(?![\\p{L}\\p{N}_])`, 'iu');
  return (line) => re.test(line);
}
