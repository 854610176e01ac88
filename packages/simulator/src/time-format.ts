/**
 * How the simulated service writes timestamps. The reference says only "string" (§2), so a real
 * service may write them in any of several ways; every timestamp of every answer goes through one
 * TimeFormatter, and whatever the format, the instant written is the same.
 *
 * Choices that vary (the offset, or the format in `mixed`) are a hash of the seed and the instant,
 * not a stream: an instant is always written the same way by one simulator, whatever the order of
 * requests, so a run with concurrent reads repeats exactly.
 */
import { hash32 } from './prng.js';

/** The timestamp formats, `iso` first (the default). */
export const TIME_FORMATS = ['iso', 'iso-ms', 'offset', 'space', 'mixed', 'zoneless'] as const;
/** A timestamp format of the simulator. */
export type TimeFormat = (typeof TIME_FORMATS)[number];

/** Checks a time format for the simulator's options; throws an Error naming the formats. */
export function checkTimeFormat(format: string): TimeFormat {
  if (!(TIME_FORMATS as readonly string[]).includes(format))
    throw new Error(`timeFormat must be one of ${TIME_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  return format as TimeFormat;
}

/** What `mixed` picks from: every format with a zone (zoneless is ambiguous, so it stays a mode of its own). */
const MIXED = ['iso', 'iso-ms', 'offset', 'space'] as const satisfies readonly TimeFormat[];
/**
 * Offsets other than UTC, in minutes: both signs, half and three-quarter hours, and the extremes
 * (+14:00, -12:00), so the local date often differs from the UTC one.
 */
const OFFSETS_MIN = [330, -180, 540, -420, 60, 765, -570, 840, -720, 345] as const;
const MINUTE = 60_000;

/** Writes instants (ms since the epoch) in the current format. */
export class TimeFormatter {
  constructor(
    /** Switchable at run time (control.setTimeFormat). */
    public format: TimeFormat,
    private readonly seed: number,
  ) {}

  /** An instant as the service writes it; null stays null. */
  write(ms: number | null): string | null {
    if (ms === null) return null;
    const format =
      this.format === 'mixed'
        ? (MIXED[hash32(this.seed, ms, 1) % MIXED.length] as (typeof MIXED)[number])
        : this.format;
    switch (format) {
      case 'iso':
        return new Date(ms).toISOString();
      case 'iso-ms':
        // Microseconds, as Python or PostgreSQL write them: more digits than JavaScript's three.
        return `${new Date(ms).toISOString().slice(0, -1)}000Z`;
      case 'offset':
        return this.local(ms, 'T', this.offsetOf(ms));
      case 'space':
        // A space instead of the T, written in UTC or in an offset by turns.
        return this.local(ms, ' ', hash32(this.seed, ms, 2) % 2 === 0 ? 0 : this.offsetOf(ms));
      case 'zoneless':
        return this.local(ms, 'T', null);
    }
  }

  private offsetOf(ms: number): number {
    return OFFSETS_MIN[hash32(this.seed, ms, 3) % OFFSETS_MIN.length] as number;
  }

  /**
   * The wall time at `offsetMin` from UTC (null: UTC, but no zone written), seconds always and
   * milliseconds only when there are some: `2026-11-24 13:30:00+05:30`, `2026-11-24T08:00:00`.
   */
  private local(ms: number, separator: 'T' | ' ', offsetMin: number | null): string {
    const wall = new Date(ms + (offsetMin ?? 0) * MINUTE).toISOString();
    const fraction = ms % 1000 === 0 ? '' : wall.slice(19, 23);
    return `${wall.slice(0, 10)}${separator}${wall.slice(11, 19)}${fraction}${zone(offsetMin)}`;
  }
}

function zone(offsetMin: number | null): string {
  if (offsetMin === null) return '';
  if (offsetMin === 0) return 'Z';
  const abs = Math.abs(offsetMin);
  return `${offsetMin < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
