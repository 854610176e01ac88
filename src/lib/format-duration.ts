/**
 * How a duration is written:
 * - `brief`: the two largest units, as a person reads an age in a summary or a message: "2h 5m",
 *   "3d 4h", "45s".
 * - `exact`: every unit down to the millisecond, run together, as the config file writes a
 *   duration ("1h30m", "500ms"): for a configured duration said back, which `parseDuration` reads.
 * - `seconds`: every unit down to the whole second, run together ("1d2h5m30s"): for a measured
 *   span said next to a configured one ("held 29m59s of 30m"), never more than was measured.
 */
export type DurationStyle = 'brief' | 'exact' | 'seconds';

const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
] as const;

type Unit = (typeof UNITS)[number][0];

/** Per style: how many unit places from the largest one shown, the smallest unit, and what joins them. */
const STYLES: Record<DurationStyle, { places: number; smallest: Unit; separator: string }> = {
  brief: { places: 2, smallest: 's', separator: ' ' },
  exact: { places: Infinity, smallest: 'ms', separator: '' },
  seconds: { places: Infinity, smallest: 's', separator: '' },
};

/**
 * A duration in milliseconds as text, in a {@link DurationStyle} (`brief` unless told). Units that
 * come out zero are left out, what is below the smallest unit is dropped (never rounded up), and
 * nothing at all reads "0s": a negative duration (clock skew between the service and us) too.
 * Infinity (a repeat interval that is off) reads "forever".
 */
export function formatDuration(ms: number, style: DurationStyle = 'brief'): string {
  if (ms === Infinity) return 'forever';
  const { places, smallest, separator } = STYLES[style];
  const parts: string[] = [];
  let rest = ms > 0 ? ms : 0;
  // Places count from the largest unit that is not zero: "3d" in brief, not "3d 30m".
  let place = 0;
  for (const [unit, size] of UNITS) {
    if (place === places) break;
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n}${unit}`);
    if (n > 0 || place > 0) place += 1;
    if (unit === smallest) break;
  }
  return parts.length > 0 ? parts.join(separator) : '0s';
}
