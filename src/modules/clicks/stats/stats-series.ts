import { DAY_MS, floorTo, HOUR_MS } from '../rollups/rollup-plan.js';
import { closedBefore } from './closed-months.js';
import type { StatsScope } from './stats.repository.js';
import { ceilTo, type Window } from './stats-window.js';
import { UTC } from './time-zone.js';
import { partsOf, scopeKey, type Readers } from './window-sums.js';

/** All clicks and bots of a bucket, or of a rollup row. */
export type Pair = [number, number];
const addPairs = (a: Pair, b: Pair): Pair => [a[0] + b[0], a[1] + b[1]];

/** The index of the bucket holding `at` (the last start at or before it). */
function bucketOf(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The UTC days that hold a bucket boundary (a start, or the end) inside them, not at their midnight. */
function splitDays(w: Window): number[] {
  const days = new Set<number>();
  for (const b of [...w.buckets, w.end]) if (b % DAY_MS !== 0) days.add(floorTo(b, DAY_MS));
  return [...days];
}

/**
 * [human clicks, bots] per bucket, from the hourly rollups (never the click records). The database sums them
 * into UTC days where a day lies whole in one bucket: every day of UTC day, week and month buckets; in another
 * zone, every UTC day but the one a week or month where a bucket starts at local midnight, which is read by
 * the hour. Day buckets of another zone are summed here from hours. (A local midnight is a UTC hour boundary
 * in every zone with a whole-hour offset; in the few with a half-hour one, an hour counts in the bucket where
 * it starts.) Closed months of each read are remembered (closed-months.ts).
 */
async function bucketSums(readers: Readers, scope: StatsScope, w: Window, now: number): Promise<Pair[]> {
  const out: Pair[] = w.buckets.map(() => [0, 0]);
  const add = (at: number, [all, bots]: Pair) => {
    if (at < w.start || at >= w.end) return;
    const bucket = out[bucketOf(w.buckets, at)]!;
    bucket[0] += all - bots;
    bucket[1] += bots;
  };
  // Each piece's rows are added as they are: a bucket sums them anyway (no map of every hour or day to build).
  const pieces = (unit: number, from: number, to: number) =>
    partsOf(
      readers.months,
      `series:${scopeKey(scope)}:${unit}`,
      from,
      to,
      now,
      (span) => readers.stats.series(scope, span.from, span.to, unit),
      addPairs,
    );

  if (w.interval === 'hour' || (w.interval === 'day' && w.tz !== UTC)) {
    for (const part of await pieces(HOUR_MS, w.start, w.end)) for (const [at, pair] of part) add(at, pair);
    return out;
  }
  const split = w.tz === UTC ? [] : splitDays(w);
  const readByHour = new Set(split);
  const [days, ...hours] = await Promise.all([
    pieces(DAY_MS, floorTo(w.start, DAY_MS), ceilTo(w.end, DAY_MS)),
    ...split.map((day) => pieces(HOUR_MS, day, day + DAY_MS)),
  ]);
  for (const part of days) for (const [at, pair] of part) if (!readByHour.has(at)) add(at, pair);
  for (const parts of hours) for (const part of parts) for (const [at, pair] of part) add(at, pair);
  return out;
}

/**
 * [human clicks, bots] per bucket of the window. The buckets that ended before the last closed day are summed
 * once and remembered as they are (one list per link or user, interval, zone and span, closed-months.ts), so
 * that a window of ten years by month, asked again, adds up the current month alone.
 */
export async function seriesOf(readers: Readers, scope: StatsScope, w: Window, now: number): Promise<Pair[]> {
  const cut = closedBefore(now);
  const ends = [...w.buckets.slice(1), w.end];
  let closed = 0;
  while (closed < ends.length && ends[closed]! <= cut) closed += 1;
  const part = (from: number, to: number): Window => ({
    ...w,
    start: w.buckets[from]!,
    end: ends[to - 1]!,
    buckets: w.buckets.slice(from, to),
  });
  const done =
    closed === 0
      ? []
      : await readers.months.rows(
          `buckets:${scopeKey(scope)}:${w.interval}:${w.tz}:${w.start}-${ends[closed - 1]}`,
          { from: w.start, to: ends[closed - 1]!, closed: true },
          now,
          () => bucketSums(readers, scope, part(0, closed), now),
        );
  return closed === w.buckets.length
    ? done
    : [...done, ...(await bucketSums(readers, scope, part(closed, w.buckets.length), now))];
}
