import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** One or more `<integer><unit>` parts, Go/Prometheus style: `30s`, `15m`, `1h30m`, `8d`, `500ms`. */
const DURATION_RE = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
const PART_RE = /(\d+)(ms|s|m|h|d|w)/g;

/** What a duration looks like, for error messages. */
export const DURATION_HINT = 'a duration such as 500ms, 30s, 15m, 26h, 8d, 2w or 1h30m';

/**
 * Parses a duration (`500ms`, `30s`, `15m`, `26h`, `8d`, `2w`, or combined like `1h30m`) into
 * milliseconds. Throws a RangeError naming the text when it is not one.
 */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  if (!DURATION_RE.test(trimmed)) {
    throw new RangeError(`${JSON.stringify(text)} is not ${DURATION_HINT}`);
  }
  let ms = 0;
  for (const [, amount, unit] of trimmed.matchAll(PART_RE)) {
    ms += Number(amount) * UNIT_MS[unit as Unit];
  }
  if (!Number.isSafeInteger(ms)) throw new RangeError(`${JSON.stringify(text)} is too long a duration`);
  return ms;
}

/**
 * Config schema of a duration: a string like `30s` in the file, milliseconds once parsed. Plain
 * numbers are refused on purpose: `timeout: 30` could mean seconds or milliseconds.
 */
export const durationSchema = z
  .string({ error: `must be ${DURATION_HINT} (a string with a unit)` })
  .regex(DURATION_RE, { error: (issue) => `must be ${DURATION_HINT}${meantDuration(issue.input)}` })
  .transform((text) => parseDuration(text));

/** Words for a unit that people write, and the unit a duration takes instead. */
const UNIT_WORDS: readonly [RegExp, Unit][] = [
  [/^(?:msecs?|milliseconds?)$/, 'ms'],
  [/^(?:secs?|seconds?)$/, 's'],
  [/^(?:mins?|minutes?)$/, 'm'],
  [/^(?:hrs?|hours?)$/, 'h'],
  [/^days?$/, 'd'],
  [/^(?:wks?|weeks?)$/, 'w'],
];

/**
 * ` (did you mean "5s"?)` for a duration written with a unit word, capitals or spaces (`5sec`,
 * `30S`, `1 h`, `2 hours`); empty when no duration is meant plainly enough.
 */
function meantDuration(input: unknown): string {
  if (typeof input !== 'string') return '';
  const text = input.toLowerCase().replace(/\s+/g, '');
  const parts = [...text.matchAll(/(\d+)([a-z]+)/g)];
  // Every character must belong to an amount and its unit: "1.5h" or "soon" mean nothing plain.
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return '';
  const fixed = parts.map(([, amount, word]) => {
    const unit = word! in UNIT_MS ? word : UNIT_WORDS.find(([re]) => re.test(word!))?.[1];
    return unit === undefined ? undefined : `${amount}${unit}`;
  });
  return fixed.includes(undefined) ? '' : ` (did you mean "${fixed.join('')}"?)`;
}

/**
 * {@link durationSchema} for a time limit or an interval, where 0 can only be a mistake: a request
 * limit of 0s fails every request, a delivery loop every 0s spins, a retention of 0s keeps nothing.
 */
export const positiveDurationSchema = durationSchema.refine((ms) => ms > 0, 'must be longer than 0s');

/**
 * A schema that also accepts the word `off`, which parses to `null` ("disabled"). Wraps any
 * string schema: `offOr(durationSchema)`, `offOr(listenSchema)`.
 */
export function offOr<S extends z.ZodType>(schema: S, what = 'a value') {
  return z.union([z.literal('off').transform(() => null), schema], {
    error: `must be "off" or ${what}`,
  });
}

/** `offOr(durationSchema)` with a message that says what a duration looks like. */
export const offOrDurationSchema = offOr(durationSchema, DURATION_HINT);
