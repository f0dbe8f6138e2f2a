import { AppError, notFound } from '../../../lib/app-error.js';
import type { Caller } from '../../../lib/caller.js';
import type { Clock } from '../../../lib/clock.js';
import { isoTime } from '../../../lib/common.schemas.js';
import type { LinkRow, UserValueKind, ValueKind } from '../../../db/types.js';
import type { UsersRepository } from '../../users/index.js';
import { DAY_MS, floorTo } from '../rollups/rollup-plan.js';
import {
  MAX_CHOICES,
  TOP_VALUES,
  type LinkStats,
  type LinkStatsQueryT,
  type StatsQueryT,
  type UserStats,
} from './stats.schemas.js';
import { ClosedMonthCache } from './closed-months.js';
import { splitValueKey, type StatsRepository, type StatsScope } from './stats.repository.js';
import { seriesOf } from './stats-series.js';
import { ceilTo, statsWindow, type Window } from './stats-window.js';
import { scopeKey, sumsOf, type Readers } from './window-sums.js';

/** What the statistics need of links (clicks/link-access.ts: the links service implements it). */
export interface StatsLinks {
  /** the link for its statistics: anyone for an anonymous link, else its owner or an admin */
  getForStats(code: string, caller: Caller | null, domain?: string): Promise<LinkRow>;
  /** the id a `domain` names for a user (0: the default domain), null for a name that is no domain of theirs here */
  domains: { idOf(domain: string, viewer: { userId: number; admin: boolean }): Promise<number | null> };
}

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

const addNumbers = (a: number, b: number): number => a + b;
/** The top lists every statistics answer has, by the rollup kind they read. */
const TOPS: Array<[keyof Tops, ValueKind]> = [
  ['top_referrers', 'referrer'],
  ['top_user_agents', 'user_agent'],
  ['top_browsers', 'browser'],
  ['top_os', 'os'],
  ['top_devices', 'device'],
  ['top_countries', 'country'],
];
type Tops = Pick<
  LinkStats,
  'top_referrers' | 'top_user_agents' | 'top_browsers' | 'top_os' | 'top_devices' | 'top_countries'
>;
/** Deleted links stay in a user's rollups: more candidates than shown, so that they can be left out. */
const LINK_CANDIDATES = 3 * TOP_VALUES;

/**
 * Every top list of the window, at most `limits[kind]` values each, most clicks first, ties by value. All
 * kinds are read together (one statement per span) and summed per (kind, value).
 */
async function topsOf(
  { stats, months }: Readers,
  scope: StatsScope,
  w: Window,
  now: number,
): Promise<Map<UserValueKind, Array<{ value: string; clicks: number }>>> {
  const fromDay = floorTo(w.start, DAY_MS);
  const toDay = ceilTo(w.end, DAY_MS);
  const totals = await sumsOf(
    months,
    `values:${scopeKey(scope)}`,
    fromDay,
    toDay,
    now,
    (span) => stats.valueTotals(scope, span.from, span.to),
    addNumbers,
  );
  const byKind = new Map<UserValueKind, Array<[string, number]>>();
  for (const [key, n] of totals) {
    const [kind, value] = splitValueKey(key);
    let list = byKind.get(kind);
    if (!list) byKind.set(kind, (list = []));
    list.push([value, n]);
  }
  const out = new Map<UserValueKind, Array<{ value: string; clicks: number }>>();
  for (const [kind, list] of byKind) {
    out.set(
      kind,
      list
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        .slice(0, kind === 'link' ? LINK_CANDIDATES : TOP_VALUES)
        .map(([value, clicks]) => ({ value, clicks })),
    );
  }
  return out;
}

type ById<K extends string> = { [k in K]: string } & { human_clicks: number; unique_visitors: number };
const byClicks =
  <K extends string>(id: K) =>
  (a: ById<K>, b: ById<K>): number =>
    b.human_clicks - a.human_clicks || (a[id] < b[id] ? -1 : a[id] > b[id] ? 1 : 0);

/**
 * by_rule and by_variant (SPEC §21): a link's human clicks and distinct human visitors per rule and per variant
 * over the whole UTC days of the window, as its top lists. Only ids that routed a visit are listed.
 */
async function choicesOf(
  stats: Pick<StatsRepository, 'choiceTotals'>,
  linkId: number,
  w: Window,
): Promise<Pick<LinkStats, 'by_rule' | 'by_variant'>> {
  const rows = await stats.choiceTotals(linkId, floorTo(w.start, DAY_MS), ceilTo(w.end, DAY_MS));
  const byRule: LinkStats['by_rule'] = [];
  const byVariant: LinkStats['by_variant'] = [];
  for (const r of rows) {
    const figures = { human_clicks: r.clicks, unique_visitors: r.visitors };
    if (r.kind === 'rule') byRule.push({ rule_id: r.value, ...figures });
    else byVariant.push({ variant_id: r.value, ...figures });
  }
  return {
    by_rule: byRule.sort(byClicks('rule_id')).slice(0, MAX_CHOICES),
    by_variant: byVariant.sort(byClicks('variant_id')).slice(0, MAX_CHOICES),
  };
}

/** The lifetime figures of a link or a user, from its counters. */
const lifetime = (clicks: number, bots: number, unique: number, first: number | null, last: number | null) => ({
  total_clicks: clicks,
  human_clicks: clicks - bots,
  bot_clicks: bots,
  unique_visitors: unique,
  first_click_at: first === null ? null : isoTime(first),
  last_click_at: last === null ? null : isoTime(last),
});

/** The domains a user's statistics cover: `domain` (a limited key's only), the key's, or null for every one. */
async function domainScope(
  links: StatsLinks,
  userId: number,
  domain: string | undefined,
  keyDomains: readonly number[] | null,
): Promise<readonly number[] | null> {
  if (domain === undefined) return keyDomains;
  // The user's own claim of an unverified name is the one their links are on (SPEC §25).
  const id = (await links.domains.idOf(domain, { userId, admin: false })) ?? -1;
  if (keyDomains && !keyDomains.includes(id))
    throw new AppError('FORBIDDEN', 'This API key is limited to other domains', [
      { field: 'domain', message: "is not one of the API key's domains" },
    ]);
  return [id];
}

/** The window's figures: the time series, the top lists and the data's freshness (and the candidates for top_links). */
async function figuresOf(
  deps: { readers: Readers; stats: Pick<StatsRepository, 'freshAsOf'>; clock: Clock },
  scope: StatsScope,
  w: Window,
) {
  const { readers, stats, clock } = deps;
  const now = clock.now();
  const [series, fresh, tops] = await Promise.all([
    seriesOf(readers, scope, w, now),
    stats.freshAsOf(),
    topsOf(readers, scope, w, now),
  ]);
  const out = {
    from: isoTime(w.start),
    to: isoTime(w.end),
    interval: w.interval,
    tz: w.tz,
    timeseries: w.buckets.map((t, i) => ({ start: label(t), clicks: series[i]![0], bots: series[i]![1] })),
    data_fresh_as_of: fresh === null ? null : isoTime(fresh),
  } as Pick<LinkStats, 'from' | 'to' | 'interval' | 'tz' | 'timeseries' | 'data_fresh_as_of'> & Tops;
  for (const [name, kind] of TOPS) out[name] = tops.get(kind) ?? [];
  return { body: out, links: tops.get('link') ?? [] };
}

export type StatsService = ReturnType<typeof createStatsService>;

/**
 * Statistics (SPEC §6, §15), read from rollups only, never from the click records, so that their cost depends
 * on the window and not on the number of clicks:
 * - lifetime figures (total/bot clicks, unique_visitors, first/last click) are columns of the link's own row,
 *   maintained in the same transaction as the click records (a user's: the sums over their links' rows);
 * - the time series reads at most 24 hourly rows per day of the window (clicks and bots), summed by the
 *   database into days where weeks and months need no finer (stats-series.ts);
 * - each top list reads at most 101 rows per day (the cap in rollup-plan.ts), humans only;
 * - a link's by_rule and by_variant read its routed human visitors per day of the window (unique visitors over
 *   days cannot be summed; links without rules have no such rows);
 * - whole months of the window that are over are summed once and remembered (closed-months.ts), so a long
 *   window reads only the days at its ends.
 * A link's and a user's statistics are the same computation over different rollups (StatsScope).
 */
export function createStatsService(deps: {
  stats: Pick<StatsRepository, 'series' | 'valueTotals' | 'choiceTotals' | 'userTotals' | 'userCodes' | 'freshAsOf'>;
  links: StatsLinks;
  users: Pick<UsersRepository, 'findById'>;
  clock: Clock;
}) {
  const { stats, links, users, clock } = deps;
  const readers: Readers = { stats, months: new ClosedMonthCache() };

  const figures = (scope: StatsScope, w: Window) => figuresOf({ readers, stats, clock }, scope, w);

  return {
    /**
     * Visits were written on past dates (an import in this process): the sums remembered for closed days are
     * stale. (An import by another process is seen within the cache's lifetime, closed-months.ts.)
     */
    forgetRemembered: (): void => readers.months.clear(),

    async stats(code: string, query: LinkStatsQueryT, caller: Caller | null): Promise<LinkStats> {
      const link = await links.getForStats(code, caller, query.domain);
      const clicks = Number(link.click_count);
      const first = link.first_click_at === null ? null : Number(link.first_click_at);
      const last = link.last_click_at === null ? null : Number(link.last_click_at);
      // All time: since the creation, or since the first click when an import brought older history.
      const w = statsWindow(query, Math.min(Number(link.created_at), first ?? Number.POSITIVE_INFINITY), clock);
      const [window, routed] = await Promise.all([figures({ link: link.id }, w), choicesOf(stats, link.id, w)]);
      return {
        short_code: link.short_code,
        click_count: clicks,
        ...lifetime(clicks, Number(link.bot_clicks), Number(link.unique_visitors), first, last),
        ...window.body,
        ...routed,
      };
    },

    /**
     * Over all of a user's links (SPEC §15), or those on `query.domain` (SPEC §19); access (self or admin) is the
     * route's policy. `keyDomains`: the domains of the caller's API key when it is limited to some.
     */
    async userStats(
      userId: number,
      query: StatsQueryT,
      keyDomains: readonly number[] | null = null,
    ): Promise<UserStats> {
      const user = await users.findById(userId);
      if (!user) throw notFound('User');
      const domains = await domainScope(links, userId, query.domain, keyDomains);
      const scope = { user: userId, ...(domains ? { domains } : {}) };
      const totals = await stats.userTotals(userId, scope.domains);
      // All time: since the account's creation, or its links' first click when imported history is older.
      const w = statsWindow(
        query,
        Math.min(Number(user.created_at), totals.firstAt ?? Number.POSITIVE_INFINITY),
        clock,
      );
      const { body, links: candidates } = await figures(scope, w);
      const live = await stats.userCodes(
        userId,
        candidates.map((c) => c.value),
        scope.domains,
      );
      return {
        user_id: userId,
        links: totals.links,
        ...lifetime(totals.clicks, totals.bots, totals.uniqueVisitors, totals.firstAt, totals.lastAt),
        ...body,
        top_links: candidates
          .filter((c) => live.has(c.value))
          .slice(0, TOP_VALUES)
          .map((c) => ({ short_code: c.value, clicks: c.clicks })),
      };
    },
  };
}
