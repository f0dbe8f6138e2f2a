import type { StatsRepository, StatsScope } from './stats.repository.js';
import { spans, type ClosedMonthCache, type Span } from './closed-months.js';

/** What the figures read: the rollups, through the closed months' sums. */
export interface Readers {
  stats: Pick<StatsRepository, 'series' | 'valueTotals'>;
  months: ClosedMonthCache;
}

/** A rollup read's key in the closed months' cache: whose rollups. */
export const scopeKey = (scope: StatsScope): string =>
  'link' in scope ? `l${scope.link}` : `u${scope.user}${scope.domains ? `d${scope.domains.join(',')}` : ''}`;

const mergeInto = <K, V>(into: Map<K, V>, rows: Array<[K, V]>, add: (a: V, b: V) => V) => {
  for (const [key, v] of rows) {
    const had = into.get(key);
    into.set(key, had === undefined ? v : add(had, v));
  }
};

/**
 * Sums per key over [from, to): the closed part of the window summed once and remembered as one piece
 * (from the months' sums, remembered too, so windows that share months share them), and the open part, the
 * last day or so, read every time. A year-long window thus merges two short lists per request, not 13.
 */
export async function sumsOf<K, V>(
  months: ClosedMonthCache,
  prefix: string,
  from: number,
  to: number,
  now: number,
  load: (span: Span) => Promise<Array<[K, V]>>,
  add: (a: V, b: V) => V,
): Promise<Map<K, V>> {
  const parts = await partsOf(months, prefix, from, to, now, load, add);
  const out = new Map<K, V>(parts[0]);
  for (const part of parts.slice(1)) mergeInto(out, part, add);
  return out;
}

/**
 * The pieces sumsOf adds up, each summed per key but a key possibly in several: for a reader that adds them
 * up itself (a time series into its buckets), without copying the remembered piece into a new map each time.
 */
export async function partsOf<K, V>(
  months: ClosedMonthCache,
  prefix: string,
  from: number,
  to: number,
  now: number,
  load: (span: Span) => Promise<Array<[K, V]>>,
  add: (a: V, b: V) => V,
): Promise<Array<Array<[K, V]>>> {
  const all = spans(from, to, now);
  const closed = all.filter((span) => span.closed);
  const parts: Array<Array<[K, V]>> = [];
  if (closed.length > 0) {
    const whole: Span = { from: closed[0]!.from, to: closed[closed.length - 1]!.to, closed: true };
    parts.push(
      await months.rows(`${prefix}:${whole.from}-${whole.to}`, whole, now, async () => {
        const sums = new Map<K, V>();
        for (const span of closed)
          mergeInto(sums, await months.rows(`${prefix}:${span.from}-${span.to}`, span, now, () => load(span)), add);
        return [...sums];
      }),
    );
  }
  for (const span of all) if (!span.closed) parts.push(await load(span));
  return parts;
}
