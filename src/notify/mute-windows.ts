/**
 * Mute windows: recurring local time ranges (a night, a weekend) during which a route's
 * notifications are held back. Local time is computed with Intl in the window's IANA time zone, so
 * daylight-saving changes need no special case.
 */
import type { MuteWindowSettings } from './notify-settings.js';

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** A mute window or its reference that cannot be used; the message names the culprit. */
export class MuteWindowError extends Error {
  override name = 'MuteWindowError';
}

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
 * Compiles one `notify.mute_windows` entry. A range whose end is before its start crosses midnight
 * and belongs to the weekday it STARTS on: `friday 22:00-06:00` covers Saturday 03:00. `24:00` is
 * allowed as an end. Throws {@link MuteWindowError} for an unknown time zone, weekday or time.
 */
export function compileMuteWindow(settings: MuteWindowSettings): MuteWindow {
  const where = `mute window ${JSON.stringify(settings.name)}`;
  const localTimeOf = localTimeReader(settings.time_zone, where);
  const days = weekdaySet(settings.weekdays, where);
  if (settings.times.length === 0) throw new MuteWindowError(`${where}: times must list at least one range`);
  const ranges = settings.times.map((t, i) => {
    const start = minuteOf(t.start, `${where} times[${i}].start`, false);
    const end = minuteOf(t.end, `${where} times[${i}].end`, true);
    if (start === end) throw new MuteWindowError(`${where} times[${i}]: start and end are equal (${t.start})`);
    return { start, end };
  });
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

/**
 * Compiles every window by name. Throws {@link MuteWindowError} for a duplicate name or a bad window.
 */
export function compileMuteWindows(settings: readonly MuteWindowSettings[]): Map<string, MuteWindow> {
  const out = new Map<string, MuteWindow>();
  for (const s of settings) {
    if (out.has(s.name)) throw new MuteWindowError(`mute window ${JSON.stringify(s.name)} is defined twice`);
    out.set(s.name, compileMuteWindow(s));
  }
  return out;
}

/**
 * Reads a local time in `timeZone`. Also used by the digest. Throws {@link MuteWindowError} naming
 * `where` when the time zone is unknown.
 */
export function localTimeReader(timeZone: string, where: string): (now: number) => LocalTime & { date: string } {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'long',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
  } catch {
    throw new MuteWindowError(
      `${where}: unknown time zone ${JSON.stringify(timeZone)} (use an IANA name such as Europe/Berlin)`,
    );
  }
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

/** Parses `HH:MM` into minutes since midnight; throws naming `where`. */
export function minuteOf(text: string, where: string, allowEndOfDay: boolean): number {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(text);
  const minute = m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  if (!m || minute > 24 * 60 || (minute === 24 * 60 && !allowEndOfDay)) {
    throw new MuteWindowError(
      `${where}: ${JSON.stringify(text)} is not a time of day (HH:MM, 00:00 to 23:59${allowEndOfDay ? ', or 24:00' : ''})`,
    );
  }
  return minute;
}

function weekdaySet(weekdays: readonly string[] | undefined, where: string): Set<number> {
  if (!weekdays || weekdays.length === 0) return new Set([0, 1, 2, 3, 4, 5, 6]);
  const out = new Set<number>();
  for (const entry of weekdays) {
    const [from, to = from] = entry.split(':').map((s) => dayOf(s, where));
    // A range wraps around the week: saturday:monday is Sat, Sun, Mon.
    for (let d = from as number; ; d = (d + 1) % 7) {
      out.add(d);
      if (d === to) break;
    }
  }
  return out;
}

function dayOf(text: string, where: string): number {
  const t = text.trim().toLowerCase();
  const i = DAYS.findIndex((d) => d === t || (t.length === 3 && d.startsWith(t)));
  if (i < 0) {
    throw new MuteWindowError(
      `${where}: ${JSON.stringify(text)} is not a weekday (monday … sunday, mon … sun, or a range monday:friday)`,
    );
  }
  return i;
}
