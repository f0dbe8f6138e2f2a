/**
 * Wall-clock arithmetic in an IANA time zone with nothing but Intl (no time-zone library in the bundle):
 * the zone's UTC offset at an instant, and the instant of a local midnight.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The zone's offset from UTC at that instant, in ms (Berlin in winter: +3,600,000). */
export function zoneOffsetMs(tz: string, instantMs: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(tz).formatToParts(new Date(instantMs)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - Math.floor(instantMs / 1000) * 1000;
}

/** The instant at which the day `YYYY-MM-DD` begins in the zone (two passes settle a DST change). */
export function zonedMidnight(day: string, tz: string): number {
  const wall = Date.parse(`${day}T00:00:00Z`);
  const first = wall - zoneOffsetMs(tz, wall);
  return wall - zoneOffsetMs(tz, first);
}

/** Whether the runtime knows the zone (a hand-edited URL may name none). */
export function isKnownZone(tz: string): boolean {
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
}

/** The browser's own zone, UTC when it cannot say. */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** `YYYY-MM-DD` of an instant in the zone. */
export function zonedDay(instantMs: number, tz: string): string {
  return new Date(instantMs + zoneOffsetMs(tz, instantMs)).toISOString().slice(0, 10);
}
