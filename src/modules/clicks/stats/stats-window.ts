import { validationError } from '../../../lib/app-error.js';
import type { Clock } from '../../../lib/clock.js';
import { isoTime } from '../../../lib/common.schemas.js';
import { INSTANT_RULE, LATEST_INSTANT, parseInstant } from '../../../lib/instant.js';
import { DAY_MS, floorTo, HOUR_MS } from '../rollups/rollup-plan.js';
import { MAX_BUCKETS, type StatsQueryT } from './stats.schemas.js';
import { canonicalTimeZone, endOfDay, isTimeZone, nextDay, startOfDay, UTC } from './time-zone.js';

export const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;

/** A statistics request's window: [start, end), its bucket starts, their length (hour or day) and zone. */
export type Window = { start: number; end: number; unit: number; tz: string; buckets: number[] };

/** The query's zone, canonical (UTC for its aliases); an unknown one is a 400. */
function timeZone(query: StatsQueryT): string {
  const tz = query.tz ?? UTC;
  if (!isTimeZone(tz)) throw validationError([{ field: 'tz', message: `unknown time zone "${tz}": an IANA zone such as Europe/Berlin or UTC` }], 'Query parameters are invalid');
  const canonical = canonicalTimeZone(tz);
  return canonical === 'Etc/UTC' || canonical === 'Etc/GMT' ? UTC : canonical;
}

/**
 * The window of `from`/`to` (SPEC §15) in buckets of the interval in the zone: at most MAX_BUCKETS (without
 * `from`: the latest ones, from the link's or user's creation at the earliest); a bad window is a 400.
 */
export function statsWindow(query: StatsQueryT, createdAt: number, clock: Clock): Window {
  const tz = timeZone(query);
  const unit = query.interval === 'hour' ? HOUR_MS : DAY_MS;
  const from = query.from === undefined ? null : parseInstant(query.from);
  const to = query.to === undefined ? clock.now() : parseInstant(query.to);
  const details = [];
  if (query.from !== undefined && from === null) details.push({ field: 'from', message: INSTANT_RULE });
  if (to === null) details.push({ field: 'to', message: INSTANT_RULE });
  if (details.length || to === null) throw validationError(details, 'Query parameters are invalid');
  if (from !== null && from >= to) throw validationError([{ field: 'from', message: 'must be before to' }], 'Query parameters are invalid');
  const tooMany = (n: string) =>
    validationError([{ field: 'from', message: `the window holds ${n} ${query.interval ?? 'day'} buckets; at most ${MAX_BUCKETS} (narrow from/to or use a coarser interval)` }], 'Query parameters are invalid');
  const floor = (ms: number) => (unit === HOUR_MS ? floorTo(ms, HOUR_MS) : startOfDay(ms, tz));
  const next = (ms: number) => (unit === HOUR_MS ? ms + HOUR_MS : nextDay(ms, tz));
  // The window's end is a bucket boundary; the one after 9999-12-31 is not writable (+010000-…): stop before it.
  const end = Math.min(unit === HOUR_MS ? ceilTo(to, HOUR_MS) : endOfDay(to, tz), floor(LATEST_INSTANT));
  if (from !== null && floor(from) >= end) throw validationError([{ field: 'from', message: `must be before ${isoTime(end)}, the last bucket boundary before the year 10000` }], 'Query parameters are invalid');
  // Days are 23 to 25 hours long: a window longer than this has too many buckets whatever the zone.
  const longest = (MAX_BUCKETS + 1) * (unit === HOUR_MS ? HOUR_MS : DAY_MS + HOUR_MS);
  let start: number;
  if (from !== null) {
    start = floor(from);
    if (end - start > longest) throw tooMany(`about ${Math.round((end - start) / unit)}`);
  } else start = floor(Math.max(createdAt, end - longest));
  const buckets: number[] = [];
  for (let t = start; t < end; t = next(t)) buckets.push(t);
  if (buckets.length > MAX_BUCKETS) {
    if (from !== null) throw tooMany(String(buckets.length));
    buckets.splice(0, buckets.length - MAX_BUCKETS);
  }
  if (buckets.length === 0) buckets.push(floor(end - 1));
  return { start: buckets[0]!, end, unit, tz, buckets };
}

