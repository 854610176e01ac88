/**
 * Mute windows: recurring local time ranges (a night, a weekend) during which a route's
 * notifications are held back. Local time is computed with Intl in the window's IANA time zone, so
 * daylight-saving changes need no special case.
 */
import type { MuteWindowSettings } from './notify-settings.js';

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** Local wall-clock facts of one instant in one time zone. */
interface LocalTime {
  /** 0 = Sunday. */
  weekday: number;
  /** Minutes since local midnight. */
  minute: number;
}

/** A compiled mute window. */
export interface MuteWindow {
  readonly name: string;
  /** True when `now` (ms) falls inside the window. */
  isActive(now: number): boolean;
}

/**
 * Compiles one `notify.mute_windows` entry, as the config's schema (`notify-schema.ts`) accepted it:
 * a known time zone, weekdays, times of day `HH:MM` (`24:00` as an end), each start apart from its
 * end. A range whose end is before its start crosses midnight and belongs to the weekday it STARTS
 * on: `friday 22:00-06:00` covers Saturday 03:00.
 */
export function compileMuteWindow(settings: MuteWindowSettings): MuteWindow {
  const localTimeOf = localTimeReader(settings.time_zone);
  const days = weekdaySet(settings.weekdays);
  const ranges = settings.times.map((t) => ({ start: minuteOf(t.start), end: minuteOf(t.end) }));
  return {
    name: settings.name,
    isActive(now: number): boolean {
      const local = localTimeOf(now);
      const yesterday = (local.weekday + 6) % 7;
      return ranges.some(({ start, end }) => {
        if (start < end) return days.has(local.weekday) && local.minute >= start && local.minute < end;
        // Crosses midnight: the evening part belongs to today, the morning part to yesterday's window.
        return (days.has(local.weekday) && local.minute >= start) || (days.has(yesterday) && local.minute < end);
      });
    },
  };
}

/** Compiles every window by name (the config refuses two of one name: `config-references.ts`). */
export function compileMuteWindows(settings: readonly MuteWindowSettings[]): Map<string, MuteWindow> {
  return new Map(settings.map((s) => [s.name, compileMuteWindow(s)]));
}

/**
 * Reads a local time in `timeZone`, one the config's schema knows (`timeZoneSchema`). Also used by
 * the digest.
 */
export function localTimeReader(timeZone: string): (now: number) => LocalTime & { date: string } {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    weekday: 'long',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  });
  return (now) => {
    const parts = Object.fromEntries(format.formatToParts(new Date(now)).map((p) => [p.type, p.value]));
    const weekday = DAYS.indexOf(String(parts.weekday).toLowerCase() as (typeof DAYS)[number]);
    return {
      weekday,
      minute: Number(parts.hour) * 60 + Number(parts.minute),
      date: `${parts.year}-${parts.month}-${parts.day}`,
    };
  };
}

/** A time of day `HH:MM` (as the config's schema checked it) in minutes since midnight. */
export function minuteOf(text: string): number {
  return Number(text.slice(0, 2)) * 60 + Number(text.slice(3));
}

/** The weekdays of `weekdays` (days and ranges, lowercased by the schema); absent: every day. */
function weekdaySet(weekdays: readonly string[] | undefined): Set<number> {
  if (!weekdays) return new Set([0, 1, 2, 3, 4, 5, 6]);
  const out = new Set<number>();
  for (const entry of weekdays) {
    const [from, to = from] = entry.split(':').map(dayOf);
    // A range wraps around the week: saturday:monday is Sat, Sun, Mon.
    for (let d = from as number; ; d = (d + 1) % 7) {
      out.add(d);
      if (d === to) break;
    }
  }
  return out;
}

/** A weekday's number (0 = Sunday) from its name or its three-letter abbreviation. */
function dayOf(name: string): number {
  return DAYS.findIndex((d) => d.startsWith(name));
}
