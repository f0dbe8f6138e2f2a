import type { UserValueKind, ValueKind } from '../../../db/types.js';
import type { ClickEvent } from '../event/click-event.js';
import { DIRECT_REFERRER, UNKNOWN_VALUE } from '../event/dimensions.js';
import { clickFacts, type ClickFacts } from './click-facts.js';
import { ValueCounts } from './daily-values.js';
import { addChoices, byChoiceKey, type ChoiceIncrement } from './rollup-choices.js';

export type { ChoiceIncrement } from './rollup-choices.js';
export { clickFacts, type ClickFacts } from './click-facts.js';

/**
 * The one rollup implementation: turns a batch of clicks into the increments of each rollup, in memory, so a
 * flush writes one statement per row instead of one per click. Pure functions, no SQL: the PostgreSQL writer
 * (pg-click-writer.ts), the embedded engine's writer thread (sqlite-click-thread.ts) and the standalone
 * worker all apply the same plan, so the three paths produce identical statistics for the same visits.
 */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const VALUE_LENGTH = 255;

export const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;

export type DailyValueKind = ValueKind;

export interface LinkIncrement {
  linkId: number;
  /** every click; `bots` of them by bots */
  clicks: number;
  bots: number;
  firstAt: number;
  lastAt: number;
}

export interface HourIncrement {
  linkId: number;
  hourStart: number;
  clicks: number;
  bots: number;
}

/** A human visitor of a link: the address, or with IP_ANONYMIZE the daily hash (`ip` is the column's name). */
export interface VisitorPair {
  linkId: number;
  ip: string;
}

/** Human clicks of a link on a UTC day: its owner's `link` top list (top_links). */
export interface LinkDay {
  linkId: number;
  shortCode: string;
  dayStart: number;
  humans: number;
}

export interface DailyValueKey {
  linkId: number;
  kind: DailyValueKind;
  dayStart: number;
}

/** The clicks per value of one (link, kind, day), before the cap. */
export interface DailyValueGroup {
  key: DailyValueKey;
  /** `${linkId}:${kind}:${dayStart}` */
  id: string;
  values: ValueCounts;
}

/** What one transaction adds, each list in key order (a commit costs per page it dirties: sorted keys share pages). */
export interface RollupPlan {
  links: LinkIncrement[];
  hours: HourIncrement[];
  visitors: VisitorPair[];
  daily: DailyValueGroup[];
  days: LinkDay[];
  /** only clicks a rule or a variant routed: none at all for links without rules */
  choices: ChoiceIncrement[];
  /** per click of the batch, in its order */
  facts: ClickFacts[];
}

export const dailyKeyId = (k: DailyValueKey): string => `${k.linkId}:${k.kind}:${k.dayStart}`;

// Referrer as sent -> the value counted; bounded, forgotten wholesale.
let origins = new Map<string, string>();
const ORIGINS_REMEMBERED = 10_000;

/**
 * Referrers are grouped by origin ("https://news.example"), the useful unit for "where do visits come
 * from", which also keeps the number of distinct values low; a referrer that is not an http(s) URL (an
 * app:// scheme, garbage) counts as sent, clipped. Parsed once per distinct referrer.
 */
export function referrerValue(referrer: string): string {
  let v = origins.get(referrer);
  if (v !== undefined) return v;
  v = referrer.slice(0, VALUE_LENGTH);
  try {
    const u = new URL(referrer);
    if (u.protocol === 'http:' || u.protocol === 'https:') v = u.origin.slice(0, VALUE_LENGTH);
  } catch {
    // not a URL: keep the text
  }
  if (origins.size >= ORIGINS_REMEMBERED) origins = new Map();
  origins.set(referrer, v);
  return v;
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A link's day in a plan, with its groups of daily values by kind. */
type DayGroups = LinkDay & { groups: Partial<Record<DailyValueKind, DailyValueGroup>> };

/** One click of `value` in its day's group of `kind`, the group made (and listed in `daily`) on first use. */
function addValue(daily: DailyValueGroup[], day: DayGroups, kind: DailyValueKind, value: string): void {
  let g = day.groups[kind];
  if (g === undefined) {
    const { linkId, dayStart } = day;
    daily.push(
      (g = day.groups[kind] =
        { key: { linkId, kind, dayStart }, id: `${linkId}:${kind}:${dayStart}`, values: new ValueCounts() }),
    );
  }
  g.values.add(value, 1);
}

/**
 * Groups a batch's clicks into what one transaction adds to each rollup. Bots count in the link's and the
 * hour's totals (and `bots`), nowhere else: not as visitors, not in any top list (SPEC §15).
 */
export function planRollups(batch: readonly ClickEvent[]): RollupPlan {
  const links = new Map<number, LinkIncrement>();
  const hours = new Map<string, HourIncrement>();
  const visitors = new Map<string, VisitorPair>();
  const daily: DailyValueGroup[] = [];
  const days = new Map<string, DayGroups>();
  const facts: ClickFacts[] = [];
  const choices = new Map<string, ChoiceIncrement>();
  for (const e of batch) {
    const { linkId, clickedAt: at } = e;
    const f = clickFacts(e);
    facts.push(f);
    const bot = f.isBot ? 1 : 0;
    const g = links.get(linkId);
    if (g === undefined) links.set(linkId, { linkId, clicks: 1, bots: bot, firstAt: at, lastAt: at });
    else {
      g.clicks += 1;
      g.bots += bot;
      if (at < g.firstAt) g.firstAt = at;
      if (at > g.lastAt) g.lastAt = at;
    }
    const hourStart = floorTo(at, HOUR_MS);
    const hk = `${linkId}:${hourStart}`;
    const h = hours.get(hk);
    if (h === undefined) hours.set(hk, { linkId, hourStart, clicks: 1, bots: bot });
    else {
      h.clicks += 1;
      h.bots += bot;
    }
    if (f.isBot) continue;
    const visitor = e.visitor ?? e.ip;
    if (visitor) visitors.set(`${linkId} ${visitor}`, { linkId, ip: visitor });
    const dayStart = floorTo(at, DAY_MS);
    const dk = `${linkId}:${dayStart}`;
    let d = days.get(dk);
    if (d === undefined) days.set(dk, (d = { linkId, shortCode: e.shortCode, dayStart, humans: 0, groups: {} }));
    d.humans += 1;
    // A count-only click (HONOR_GPC) counts in its link's day (top_links) and in no other top list.
    if (f.countOnly) continue;
    // The day's six groups hang off its LinkDay: one lookup per click, not one per kind.
    addValue(daily, d, 'referrer', e.referrer ? referrerValue(e.referrer) : DIRECT_REFERRER);
    // An empty user agent counts as none (and is a bot anyway).
    if (e.userAgent) addValue(daily, d, 'user_agent', e.userAgent.slice(0, VALUE_LENGTH));
    addValue(daily, d, 'browser', f.browser ?? UNKNOWN_VALUE);
    addValue(daily, d, 'os', f.os ?? UNKNOWN_VALUE);
    addValue(daily, d, 'device', f.device ?? UNKNOWN_VALUE);
    addValue(daily, d, 'country', f.country ?? UNKNOWN_VALUE);
    if (e.ruleId != null || e.variantId != null) addChoices(choices, e, dayStart, visitor || '');
  }
  return {
    links: [...links.values()].sort((a, b) => a.linkId - b.linkId),
    hours: [...hours.values()].sort((a, b) => a.linkId - b.linkId || a.hourStart - b.hourStart),
    visitors: [...visitors.values()].sort((a, b) => a.linkId - b.linkId || byString(a.ip, b.ip)),
    daily: daily.sort(
      (a, b) => a.key.linkId - b.key.linkId || byString(a.key.kind, b.key.kind) || a.key.dayStart - b.key.dayStart,
    ),
    days: [...days.values()].sort((a, b) => a.linkId - b.linkId || a.dayStart - b.dayStart),
    choices: choices.size === 0 ? [] : [...choices.values()].sort(byChoiceKey),
    facts,
  };
}

/** The plan restricted to links that still exist (clicks of a link deleted meanwhile are dropped with it). */
export function planForLive(plan: RollupPlan, live: ReadonlySet<number>): RollupPlan {
  return {
    links: plan.links.filter((g) => live.has(g.linkId)),
    hours: plan.hours.filter((h) => live.has(h.linkId)),
    visitors: plan.visitors.filter((v) => live.has(v.linkId)),
    daily: plan.daily.filter((d) => live.has(d.key.linkId)),
    days: plan.days.filter((d) => live.has(d.linkId)),
    choices: plan.choices.filter((c) => live.has(c.linkId)),
    facts: plan.facts,
  };
}

/**
 * data_fresh_as_of after this plan is written: its latest click. The queue hands clicks over in the order they
 * came, so every earlier click of this writer is written by then (SPEC §15 "clicks up to this time are counted").
 */
export function freshAsOf(plan: RollupPlan): number {
  let latest = 0;
  for (const g of plan.links) if (g.lastAt > latest) latest = g.lastAt;
  return latest;
}

export interface UserHourIncrement {
  userId: number;
  hourStart: number;
  clicks: number;
  bots: number;
}

export interface UserDailyValueGroup {
  key: { userId: number; kind: UserValueKind; dayStart: number };
  /** `${userId}:${kind}:${dayStart}` */
  id: string;
  values: ValueCounts;
}

/** What one transaction adds to the per-user rollups (GET /users/{id}/stats), in key order. */
export interface UserRollupPlan {
  hours: UserHourIncrement[];
  daily: UserDailyValueGroup[];
}

/**
 * The per-user rollups from a (live) plan and each link's owner, read by the writer in the same transaction:
 * the link's increments summed per user, its top-list values before their cap, and the `link` kind (human
 * clicks per short code and day). Anonymous links have no user and add nothing here.
 */
export function planUserRollups(plan: RollupPlan, userOf: ReadonlyMap<number, number | null>): UserRollupPlan {
  const hours = new Map<string, UserHourIncrement>();
  const daily = new Map<string, UserDailyValueGroup>();
  const add = (userId: number, kind: UserValueKind, dayStart: number, value: string, n: number): void => {
    const id = `${userId}:${kind}:${dayStart}`;
    let g = daily.get(id);
    if (g === undefined) daily.set(id, (g = { key: { userId, kind, dayStart }, id, values: new ValueCounts() }));
    g.values.add(value, n);
  };
  for (const h of plan.hours) {
    const userId = userOf.get(h.linkId);
    if (userId === null || userId === undefined) continue;
    const k = `${userId}:${h.hourStart}`;
    const u = hours.get(k);
    if (u === undefined) hours.set(k, { userId, hourStart: h.hourStart, clicks: h.clicks, bots: h.bots });
    else {
      u.clicks += h.clicks;
      u.bots += h.bots;
    }
  }
  for (const g of plan.daily) {
    const userId = userOf.get(g.key.linkId);
    if (userId === null || userId === undefined) continue;
    for (const [value, n] of g.values) add(userId, g.key.kind, g.key.dayStart, value, n);
  }
  for (const d of plan.days) {
    const userId = userOf.get(d.linkId);
    if (userId !== null && userId !== undefined) add(userId, 'link', d.dayStart, d.shortCode, d.humans);
  }
  return {
    hours: [...hours.values()].sort((a, b) => a.userId - b.userId || a.hourStart - b.hourStart),
    daily: [...daily.values()].sort(
      (a, b) => a.key.userId - b.key.userId || byString(a.key.kind, b.key.kind) || a.key.dayStart - b.key.dayStart,
    ),
  };
}
