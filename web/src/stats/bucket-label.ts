import type { Interval } from './stats-query';

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * A bucket's start in the view's zone: its hour (`2026-11-23 14:00`), its day or its week's Monday
 * (`2026-11-23`), or its month (`2026-11`).
 */
export function bucketLabel(iso: string, interval: Interval, tz: string): string {
  const key = `${interval} ${tz}`;
  let f = formats.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      ...(interval === 'hour' ? { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' as const } : {}),
    });
    formats.set(key, f);
  }
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(iso))) parts[p.type] = p.value;
  const day = `${parts.year}-${parts.month}-${parts.day}`;
  if (interval === 'month') return `${parts.year}-${parts.month}`;
  return interval === 'hour' ? `${day} ${parts.hour}:${parts.minute}` : day;
}

/** The column's or series' name for a bucket: Hour, Day, Week (of its Monday), Month. */
export const bucketName = (interval: Interval): string =>
  ({ hour: 'Hour', day: 'Day', week: 'Week of', month: 'Month' })[interval];
