import type { ClickEvent } from '../../infra/click-queue.js';

/**
 * Turns a batch of clicks into the increments of each rollup, in memory, so the flush writes one statement
 * per table instead of one per click. Pure functions: the repository does the SQL.
 */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** distinct referrers / user agents kept per link, day and kind; later new values count as OTHER_VALUE */
export const MAX_VALUES_PER_DAY = 100;
export const OTHER_VALUE = '(other)';
const VALUE_LENGTH = 255;

export const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;

export interface LinkIncrement {
  linkId: number;
  clicks: number;
  firstAt: number;
  lastAt: number;
}

export interface DailyValueKey {
  linkId: number;
  kind: 'referrer' | 'user_agent';
  dayStart: number;
}

export function perLink(batch: readonly ClickEvent[]): Map<number, LinkIncrement> {
  const out = new Map<number, LinkIncrement>();
  for (const e of batch) {
    const g = out.get(e.linkId);
    if (!g) out.set(e.linkId, { linkId: e.linkId, clicks: 1, firstAt: e.clickedAt, lastAt: e.clickedAt });
    else {
      g.clicks += 1;
      if (e.clickedAt < g.firstAt) g.firstAt = e.clickedAt;
      if (e.clickedAt > g.lastAt) g.lastAt = e.clickedAt;
    }
  }
  return out;
}

export function perHour(batch: readonly ClickEvent[]): Array<{ link_id: number; hour_start: number; clicks: number }> {
  const out = new Map<string, { link_id: number; hour_start: number; clicks: number }>();
  for (const e of batch) {
    const hour = floorTo(e.clickedAt, HOUR_MS);
    const key = `${e.linkId}:${hour}`;
    const g = out.get(key);
    if (g) g.clicks += 1;
    else out.set(key, { link_id: e.linkId, hour_start: hour, clicks: 1 });
  }
  return [...out.values()];
}

/** Distinct (link, ip) pairs of the batch. */
export function visitorPairs(batch: readonly ClickEvent[]): Array<{ link_id: number; ip: string }> {
  const seen = new Map<string, { link_id: number; ip: string }>();
  for (const e of batch) if (e.ip) seen.set(`${e.linkId} ${e.ip}`, { link_id: e.linkId, ip: e.ip });
  return [...seen.values()];
}

/**
 * Referrers are grouped by origin ("https://news.example"), the useful unit for "where do visits come
 * from", which also keeps the number of distinct values low; a referrer that is not an http(s) URL (an
 * app:// scheme, garbage) counts as sent, clipped. User agents count as sent, clipped.
 */
export function referrerValue(referrer: string): string {
  try {
    const u = new URL(referrer);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.origin.slice(0, VALUE_LENGTH);
  } catch {
    // not a URL: keep the text
  }
  return referrer.slice(0, VALUE_LENGTH);
}

export function dailyValueCounts(batch: readonly ClickEvent[]): Map<string, { key: DailyValueKey; values: Map<string, number> }> {
  const out = new Map<string, { key: DailyValueKey; values: Map<string, number> }>();
  const add = (linkId: number, kind: DailyValueKey['kind'], dayStart: number, value: string) => {
    const id = `${linkId}:${kind}:${dayStart}`;
    let g = out.get(id);
    if (!g) out.set(id, (g = { key: { linkId, kind, dayStart }, values: new Map() }));
    g.values.set(value, (g.values.get(value) ?? 0) + 1);
  };
  for (const e of batch) {
    const day = floorTo(e.clickedAt, DAY_MS);
    if (e.referrer) add(e.linkId, 'referrer', day, referrerValue(e.referrer));
    if (e.userAgent) add(e.linkId, 'user_agent', day, e.userAgent.slice(0, VALUE_LENGTH));
  }
  return out;
}

export const dailyKeyId = (k: DailyValueKey): string => `${k.linkId}:${k.kind}:${k.dayStart}`;

/**
 * Applies the cap: values already stored for that (link, kind, day) keep counting; new values are admitted
 * while fewer than MAX_VALUES_PER_DAY are stored; the rest is added to OTHER_VALUE. This bounds the rows a
 * top-10 query reads per day, however many distinct (or hostile) referrers and user agents arrive.
 */
export function capDailyValues(
  groups: Map<string, { key: DailyValueKey; values: Map<string, number> }>,
  stored: Map<string, Set<string>>,
): Array<{ link_id: number; kind: DailyValueKey['kind']; day_start: number; value: string; clicks: number }> {
  const rows: Array<{ link_id: number; kind: DailyValueKey['kind']; day_start: number; value: string; clicks: number }> = [];
  for (const [id, { key, values }] of groups) {
    const row = (value: string, clicks: number) => ({ link_id: key.linkId, kind: key.kind, day_start: key.dayStart, value, clicks });
    const known = stored.get(id) ?? new Set<string>();
    let distinct = known.size - (known.has(OTHER_VALUE) ? 1 : 0);
    let other = 0;
    for (const [value, clicks] of values) {
      if (value === OTHER_VALUE) other += clicks;
      else if (known.has(value)) rows.push(row(value, clicks));
      else if (distinct < MAX_VALUES_PER_DAY) {
        distinct += 1;
        rows.push(row(value, clicks));
      } else other += clicks;
    }
    if (other > 0) rows.push(row(OTHER_VALUE, other));
  }
  return rows;
}
