import { validationError } from '../../lib/app-error.js';
import type { Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { isoTime } from '../../lib/common.schemas.js';
import type { LinksService } from '../links/links.service.js';
import { DAY_MS, floorTo, HOUR_MS } from './click-rollups.js';
import type { ClicksRepository } from './clicks.repository.js';
import { ClosedMonthCache, spans, type Span } from './closed-months.js';
import { MAX_BUCKETS, TOP_VALUES, type LinkStats, type LinkStatsQueryT } from './clicks.schemas.js';

const ceilTo = (ms: number, unit: number): number => Math.ceil(ms / unit) * unit;

/** Bucket labels repeat from one request to the next: formatting 1,000 dates was a tenth of a request (bench/). */
const labels = new Map<number, string>();
const label = (ms: number): string => {
  let s = labels.get(ms);
  if (s === undefined) {
    if (labels.size >= 50_000) labels.clear();
    labels.set(ms, (s = isoTime(ms)));
  }
  return s;
};

export type ClicksService = ReturnType<typeof createClicksService>;

/**
 * Statistics (SPEC §6), read from rollups only, never from the click records, so that their cost depends on
 * the window and not on the number of clicks:
 * - lifetime figures (total_clicks, unique_visitors, first/last click) are columns of the link's own row,
 *   maintained in the same transaction as the click records: click_count is therefore exactly the number of
 *   records, and total_clicks reports it (no COUNT over the records); unique_visitors grows by one when a
 *   (link, ip) pair is first inserted into link_visitors;
 * - the time series reads at most 24 hourly rows per day of the window;
 * - the top lists read at most 101 rows per day and kind (the cap in click-rollups.ts);
 * - whole months of the window that are over are summed once and remembered (closed-months.ts), so a long
 *   window reads only the days at its ends.
 */
export function createClicksService(deps: { clicks: Pick<ClicksRepository, 'series' | 'valueTotals'>; links: Pick<LinksService, 'getForStats'>; clock: Clock }) {
  const { clicks, links, clock } = deps;
  const months = new ClosedMonthCache();

  /**
   * Sums per key over [from, to): the closed part of the window summed once and remembered as one piece
   * (from the months' sums, remembered too, so windows that share months share them), and the open part, the
   * last day or so, read every time. A year-long window thus merges two short lists per request, not 13.
   */
  async function sumsOf<K extends string | number>(prefix: string, from: number, to: number, now: number, load: (span: Span) => Promise<Array<[K, number]>>): Promise<Map<K, number>> {
    const all = spans(from, to, now);
    const closed = all.filter((span) => span.closed);
    const parts: Array<Array<[K, number]>> = [];
    if (closed.length > 0) {
      const whole: Span = { from: closed[0]!.from, to: closed[closed.length - 1]!.to, closed: true };
      parts.push(await months.rows(`${prefix}:${whole.from}-${whole.to}`, whole, now, async () => {
        const sums = new Map<K, number>();
        for (const span of closed) {
          for (const [key, n] of await months.rows(`${prefix}:${span.from}`, span, now, () => load(span))) sums.set(key, (sums.get(key) ?? 0) + n);
        }
        return [...sums];
      }));
    }
    for (const span of all) if (!span.closed) parts.push(await load(span));
    const out = new Map<K, number>(parts[0]);
    for (const part of parts.slice(1)) for (const [key, n] of part) out.set(key, (out.get(key) ?? 0) + n);
    return out;
  }

  const seriesOf = (linkId: number, start: number, end: number, unit: number, now: number): Promise<Map<number, number>> =>
    sumsOf(`series:${linkId}:${unit}`, start, end, now, async (span) =>
      (await clicks.series(linkId, span.from, span.to, unit)).map((r): [number, number] => [r.start, r.clicks]));

  /** At most TOP_VALUES values, most clicks first, ties by value. */
  async function topOf(linkId: number, kind: 'referrer' | 'user_agent', fromDay: number, toDay: number, now: number): Promise<Array<{ value: string; clicks: number }>> {
    const totals = await sumsOf(`${kind}:${linkId}`, fromDay, toDay, now, (span) => clicks.valueTotals(linkId, kind, span.from, span.to));
    return [...totals]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .slice(0, TOP_VALUES)
      .map(([value, n]) => ({ value, clicks: n }));
  }

  function window(query: LinkStatsQueryT, createdAt: number): { start: number; end: number; unit: number } {
    const unit = query.interval === 'hour' ? HOUR_MS : DAY_MS;
    const from = query.from === undefined ? null : Date.parse(query.from);
    const to = query.to === undefined ? clock.now() : Date.parse(query.to);
    const details = [];
    if (from !== null && !Number.isFinite(from)) details.push({ field: 'from', message: 'must be an ISO 8601 date-time' });
    if (!Number.isFinite(to)) details.push({ field: 'to', message: 'must be an ISO 8601 date-time' });
    if (details.length) throw validationError(details, 'Query parameters are invalid');
    if (from !== null && from >= to) throw validationError([{ field: 'from', message: 'must be before to' }], 'Query parameters are invalid');
    const end = ceilTo(to, unit);
    let start: number;
    if (from !== null) start = floorTo(from, unit);
    else {
      start = Math.max(floorTo(createdAt, unit), end - MAX_BUCKETS * unit);
      if (start >= end) start = end - unit;
    }
    const buckets = (end - start) / unit;
    if (buckets > MAX_BUCKETS) {
      throw validationError(
        [{ field: 'from', message: `the window holds ${buckets} ${query.interval ?? 'day'} buckets; at most ${MAX_BUCKETS} (narrow from/to or use a coarser interval)` }],
        'Query parameters are invalid',
      );
    }
    return { start, end, unit };
  }

  return {
    async stats(code: string, query: LinkStatsQueryT, caller: Caller | null): Promise<LinkStats> {
      const link = await links.getForStats(code, caller);
      const { start, end, unit } = window(query, link.created_at);
      const fromDay = floorTo(start, DAY_MS);
      const toDay = ceilTo(end, DAY_MS);
      const now = clock.now();
      const [byStart, referrers, agents] = await Promise.all([
        seriesOf(link.id, start, end, unit, now),
        topOf(link.id, 'referrer', fromDay, toDay, now),
        topOf(link.id, 'user_agent', fromDay, toDay, now),
      ]);
      const timeseries = [];
      for (let t = start; t < end; t += unit) timeseries.push({ start: label(t), clicks: byStart.get(t) ?? 0 });
      return {
        short_code: link.short_code,
        total_clicks: Number(link.click_count),
        click_count: Number(link.click_count),
        unique_visitors: Number(link.unique_visitors),
        first_click_at: link.first_click_at === null ? null : isoTime(Number(link.first_click_at)),
        last_click_at: link.last_click_at === null ? null : isoTime(Number(link.last_click_at)),
        from: isoTime(start),
        to: isoTime(end),
        interval: query.interval ?? 'day',
        timeseries,
        top_referrers: referrers,
        top_user_agents: agents,
      };
    },
  };
}
