/**
 * Day, ISO week and calendar month buckets in an IANA time zone (SPEC §15: "day buckets start at local
 * midnight"; weeks on Monday, months on the first, at local midnight too). Offsets come from Intl
 * (the ICU data Node ships), so daylight-saving changes make 23- and 25-hour days. UTC takes the arithmetic
 * path. Hour buckets stay UTC hours: every zone with a whole-hour offset shares them.
 */
export const UTC = 'UTC';
const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    if (formatters.size > 1000) formatters.clear();
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Whether Intl knows the zone (`Europe/Berlin`, `UTC`, `America/New_York`; not `Mars/Olympus`). */
export function isTimeZone(tz: string): boolean {
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

/** The zone's canonical spelling (`utc` → `UTC`, `europe/berlin` → `Europe/Berlin`). */
export const canonicalTimeZone = (tz: string): string => formatter(tz).resolvedOptions().timeZone;

/** Local calendar fields of an instant, as a UTC timestamp of the same wall-clock reading. */
function wallClock(ms: number, tz: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(tz).formatToParts(new Date(ms)))
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

const offsetAt = (ms: number, tz: string): number =>
  wallClock(Math.floor(ms / 1000) * 1000, tz) - Math.floor(ms / 1000) * 1000;

/** The instant of local midnight of the wall-clock day `wallDay` (a UTC midnight timestamp of that date). */
function localMidnight(wallDay: number, tz: string): number {
  const first = wallDay - offsetAt(wallDay, tz);
  const second = wallDay - offsetAt(first, tz);
  // A day whose midnight does not exist (the clocks jump at 00:00) starts at the first instant it has.
  for (const t of [second, first].sort((a, b) => a - b))
    if (Math.floor(wallClock(t, tz) / DAY_MS) * DAY_MS === wallDay) return t;
  return second;
}

/** Local midnight at or before `ms`. */
export function startOfDay(ms: number, tz: string): number {
  if (tz === UTC) return Math.floor(ms / DAY_MS) * DAY_MS;
  const wallDay = Math.floor(wallClock(ms, tz) / DAY_MS) * DAY_MS;
  const t = localMidnight(wallDay, tz);
  return t <= ms ? t : localMidnight(wallDay - DAY_MS, tz);
}

/** The local midnight after the day that starts at `dayStart`. */
export function nextDay(dayStart: number, tz: string): number {
  if (tz === UTC) return dayStart + DAY_MS;
  const wallDay = Math.floor(wallClock(dayStart + 12 * 3_600_000, tz) / DAY_MS) * DAY_MS;
  return localMidnight(wallDay + DAY_MS, tz);
}

/** Local midnight at or after `ms`. */
export function endOfDay(ms: number, tz: string): number {
  const start = startOfDay(ms, tz);
  return start === ms ? ms : nextDay(start, tz);
}

/** The wall-clock date of `ms` in the zone, as the UTC midnight of that date. */
const wallDayOf = (ms: number, tz: string): number =>
  Math.floor((tz === UTC ? ms : wallClock(ms, tz)) / DAY_MS) * DAY_MS;
/** The instant a wall-clock date (a UTC midnight of that date) begins in the zone. */
const midnightOf = (wallDay: number, tz: string): number => (tz === UTC ? wallDay : localMidnight(wallDay, tz));

/** The date's ISO week's Monday (ISO 8601: weeks start on Monday), as a wall-clock date. */
const mondayOf = (wallDay: number): number => wallDay - ((new Date(wallDay).getUTCDay() + 6) % 7) * DAY_MS;
/** The first of the date's month, as a wall-clock date; `add` months later. */
const firstOfMonth = (wallDay: number, add = 0): number => {
  const d = new Date(wallDay);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + add, 1);
};

/** Local midnight of the Monday of the ISO week holding `ms` (at or before it). */
export function startOfWeek(ms: number, tz: string): number {
  const day = startOfDay(ms, tz);
  return midnightOf(mondayOf(wallDayOf(day, tz)), tz);
}

/** Local midnight of the Monday after the week that starts at `weekStart`. */
export const nextWeek = (weekStart: number, tz: string): number =>
  midnightOf(mondayOf(wallDayOf(weekStart, tz)) + 7 * DAY_MS, tz);

/** Local midnight of the first of the calendar month holding `ms` (at or before it). */
export function startOfMonth(ms: number, tz: string): number {
  const day = startOfDay(ms, tz);
  return midnightOf(firstOfMonth(wallDayOf(day, tz)), tz);
}

/** Local midnight of the first of the month after the one that starts at `monthStart`. */
export const nextMonth = (monthStart: number, tz: string): number =>
  midnightOf(firstOfMonth(wallDayOf(monthStart, tz), 1), tz);
