/**
 * How a duration is written:
 * - `brief`: the two largest units, as a person reads an age in a summary or a message: "2h 5m",
 *   "3d 4h", "45s".
 * - `exact`: every unit down to the millisecond, run together, as the config file writes a
 *   duration ("1h30m", "500ms"): for a configured duration said back, which `parseDuration` reads.
 * - `seconds`: every unit down to the whole second, run together ("1d2h5m30s"): for a measured
 *   span said next to a configured one ("held 29m59s of 30m"), never more than was measured.
 * - `days`: a time left or gone by as people read it in a sentence ("expires in 3 days"): from two
 *   days on, whole days rounded to the nearest ("2 days" for 2d 11h, "3 days" for 2d 12h); under
 *   two days, hours and minutes ("47h 59m"), since "1 day" for 47h 59m would be a day short. Said
 *   beside the exact date, which the rounding never replaces.
 */
export type DurationStyle = 'brief' | 'exact' | 'seconds' | 'days';

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
] as const;

type Unit = (typeof UNITS)[number][0];

const DAY_MS = 86_400_000;

/** From this long on, the `days` style says whole days. */
const WHOLE_DAYS_FROM = 2 * DAY_MS;

/**
 * Per style: how many unit places from the largest one shown, the largest and smallest units, and
 * what joins them.
 */
const STYLES: Record<DurationStyle, { places: number; largest: Unit; smallest: Unit; separator: string }> = {
  brief: { places: 2, largest: 'd', smallest: 's', separator: ' ' },
  exact: { places: Infinity, largest: 'd', smallest: 'ms', separator: '' },
  seconds: { places: Infinity, largest: 'd', smallest: 's', separator: '' },
  // Under two days (past that it is whole days): "47h 59m", not "1d 23h".
  days: { places: 2, largest: 'h', smallest: 's', separator: ' ' },
};

/**
 * A duration in milliseconds as text, in a {@link DurationStyle} (`brief` unless told). Units that
 * come out zero are left out, what is below the smallest unit is dropped (never rounded up), and
 * nothing at all reads "0s": a negative duration (clock skew between the service and us) too.
 * Infinity (a repeat interval that is off) reads "forever".
 */
export function formatDuration(ms: number, style: DurationStyle = 'brief'): string {
  if (ms === Infinity) return 'forever';
  if (style === 'days' && ms >= WHOLE_DAYS_FROM) return `${Math.round(ms / DAY_MS)} days`;
  const { places, largest, smallest, separator } = STYLES[style];
  const parts: string[] = [];
  let rest = ms > 0 ? ms : 0;
  // Places count from the largest unit that is not zero: "3d" in brief, not "3d 30m".
  let place = 0;
  for (const [unit, size] of UNITS.slice(UNITS.findIndex(([u]) => u === largest))) {
    if (place === places) break;
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
    if (n > 0 || place > 0) place += 1;
    if (unit === smallest) break;
  }
  return parts.length > 0 ? parts.join(separator) : '0s';
}
