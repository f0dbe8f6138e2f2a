import { validationError } from '../../../lib/app-error.js';
import type { Clock } from '../../../lib/clock.js';
import { isoTime } from '../../../lib/common.schemas.js';
import { INSTANT_RULE, LATEST_INSTANT, parseInstant } from '../../../lib/instant.js';
import { DAY_MS, floorTo, HOUR_MS } from '../rollups/rollup-plan.js';
import { MAX_BUCKETS, type Interval, type StatsQueryT } from './stats.schemas.js';
import {
  canonicalTimeZone,
  isTimeZone,
  nextDay,
  nextMonth,
  nextWeek,
  startOfDay,
  startOfMonth,
  startOfWeek,
  UTC,
} from './time-zone.js';

export const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;

/** A statistics request's window: [start, end), its bucket starts, their interval and zone. */
export type Window = { start: number; end: number; interval: Interval; tz: string; buckets: number[] };

/**
 * Without `interval`, the finest of these whose buckets hold the window (SPEC §6's default is `day`; a longer
 * window is shown by ISO week, then by calendar month, rather than refused or cut). Hours only when asked.
 */
const AUTOMATIC: readonly Interval[] = ['day', 'week', 'month'];

/** Where an interval's buckets start in a zone, the next start, and the longest a bucket can be (DST included). */
interface Calendar {
  floor(ms: number): number;
  next(start: number): number;
  longestMs: number;
}

/**
 * Bucket boundaries of a zone other than UTC, remembered: each costs a few Intl calls (a ten-year window by week
 * in New York enumerated 523 of them in 17 ms), and the same ones come back with every request of a window.
 */
const boundaries = new Map<string, number>();
function remembered(key: string, compute: () => number): number {
  let at = boundaries.get(key);
  if (at === undefined) {
    if (boundaries.size >= 200_000) boundaries.clear();
    boundaries.set(key, (at = compute()));
  }
  return at;
}

function calendarOf(interval: Interval, tz: string): Calendar {
  const cal = zonedCalendar(interval, tz);
  if (tz === UTC || interval === 'hour') return cal;
  return {
    floor: (ms) => remembered(`${interval} ${tz} floor ${ms}`, () => cal.floor(ms)),
    next: (t) => remembered(`${interval} ${tz} next ${t}`, () => cal.next(t)),
    longestMs: cal.longestMs,
  };
}

function zonedCalendar(interval: Interval, tz: string): Calendar {
  switch (interval) {
    case 'hour':
      return { floor: (ms) => floorTo(ms, HOUR_MS), next: (t) => t + HOUR_MS, longestMs: HOUR_MS };
    case 'day':
      return { floor: (ms) => startOfDay(ms, tz), next: (t) => nextDay(t, tz), longestMs: DAY_MS + HOUR_MS };
    case 'week':
      return { floor: (ms) => startOfWeek(ms, tz), next: (t) => nextWeek(t, tz), longestMs: 7 * DAY_MS + HOUR_MS };
    case 'month':
      return { floor: (ms) => startOfMonth(ms, tz), next: (t) => nextMonth(t, tz), longestMs: 31 * DAY_MS + HOUR_MS };
  }
}

const invalid = (field: string, message: string) =>
  validationError([{ field, message }], 'Query parameters are invalid');

/** The query's zone, canonical (UTC for its aliases); an unknown one is a 400. */
function timeZone(query: StatsQueryT): string {
  const tz = query.tz ?? UTC;
  if (!isTimeZone(tz)) throw invalid('tz', `unknown time zone "${tz}": an IANA zone such as Europe/Berlin or UTC`);
  const canonical = canonicalTimeZone(tz);
  return canonical === 'Etc/UTC' || canonical === 'Etc/GMT' ? UTC : canonical;
}

/** `from` (null: not given) and `to` (default now) as instants; a bad one is a 400 naming it. */
function range(query: StatsQueryT, clock: Clock): { from: number | null; to: number } {
  const from = query.from === undefined ? null : parseInstant(query.from);
  const to = query.to === undefined ? clock.now() : parseInstant(query.to);
  const details = [];
  if (query.from !== undefined && from === null) details.push({ field: 'from', message: INSTANT_RULE });
  if (to === null) details.push({ field: 'to', message: INSTANT_RULE });
  if (details.length || to === null) throw validationError(details, 'Query parameters are invalid');
  if (from !== null && from >= to) throw invalid('from', 'must be before to');
  return { from, to };
}

/** The bucket starts from `start` up to `end`, or null past `limit` of them. */
function bucketsOf(cal: Calendar, start: number, end: number, limit: number): number[] | null {
  if (end - start > (limit + 1) * cal.longestMs) return null;
  const buckets: number[] = [];
  for (let t = start; t < end; t = cal.next(t)) {
    if (buckets.length === limit) return null;
    buckets.push(t);
  }
  return buckets;
}

/**
 * The window of `from`/`to` (SPEC §6, §15) in buckets of the interval in the zone, at most MAX_BUCKETS; a bad
 * window is a 400. Without `from` it starts at `allTimeStart` (the link's or user's creation, or its first
 * click when that is earlier: imported history), or as far back as the buckets allow. Without `interval` it is
 * the finest of AUTOMATIC that holds the window.
 */
export function statsWindow(query: StatsQueryT, allTimeStart: number, clock: Clock): Window {
  const tz = timeZone(query);
  const { from, to } = range(query, clock);
  const intervals = query.interval === undefined ? AUTOMATIC : [query.interval];
  for (const interval of intervals) {
    const cal = calendarOf(interval, tz);
    // The window's end is a bucket boundary; the one after 9999-12-31 is not writable (+010000-…): stop before it.
    const end = Math.min(cal.floor(to) === to ? to : cal.next(cal.floor(to)), cal.floor(LATEST_INSTANT));
    if (from !== null && cal.floor(from) >= end)
      throw invalid('from', `must be before ${isoTime(end)}, the last bucket boundary before the year 10000`);
    const start = cal.floor(from ?? Math.min(allTimeStart, end - 1));
    const buckets = bucketsOf(cal, start, end, MAX_BUCKETS);
    if (buckets) return window(buckets, end, interval, tz);
    if (interval !== intervals[intervals.length - 1]) continue;
    if (from !== null) {
      const about = Math.round((end - start) / (cal.longestMs - HOUR_MS || HOUR_MS));
      const coarser = query.interval === undefined ? '' : ' or use a coarser interval';
      throw invalid(
        'from',
        `the window holds about ${about} ${interval} buckets; at most ${MAX_BUCKETS} (narrow from/to${coarser})`,
      );
    }
    // No `from`: the latest buckets, from as far back as they reach.
    const latest = bucketsOf(cal, cal.floor(Math.max(start, end - MAX_BUCKETS * cal.longestMs)), end, 2 * MAX_BUCKETS)!;
    return window(latest.slice(-MAX_BUCKETS), end, interval, tz);
  }
  throw new Error('unreachable: every interval list ends in a return or a throw');
}

function window(buckets: number[], end: number, interval: Interval, tz: string): Window {
  if (buckets.length === 0) throw new Error('a window has at least one bucket');
  return { start: buckets[0]!, end, interval, tz, buckets };
}
