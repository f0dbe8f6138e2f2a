import type { ClickEvent } from '../event/click-event.js';
import type { ChoiceIncrement, ClickFacts, HourIncrement, LinkIncrement, UserHourIncrement } from './rollup-plan.js';

/**
 * What a batch of clicks writes, stated once: each table, its columns and the values a plan's entry gives them.
 * Both writers build their statements from these (pg-click-writer.ts through Kysely, sqlite-rollup-writer.ts as
 * prepared statements), so a new rollup column is one edit here, beside its migration and db/types.ts.
 */

/** A table a batch adds to: an upsert on `key`, adding `sums` to the stored row. */
export interface RollupUpsert<A extends unknown[]> {
  table: string;
  key: readonly string[];
  sums: readonly string[];
  /** one row's values, `key`'s then `sums`'s */
  values(...item: A): unknown[];
}

/** The columns of an upsert, in the order of its values. */
export const upsertColumns = (t: Pick<RollupUpsert<never>, 'key' | 'sums'>): string[] => [...t.key, ...t.sums];

export const LINK_HOURLY: RollupUpsert<[HourIncrement]> = {
  table: 'link_click_hourly',
  key: ['link_id', 'hour_start'],
  sums: ['clicks', 'bots'],
  values: (h) => [h.linkId, h.hourStart, h.clicks, h.bots],
};

export const USER_HOURLY: RollupUpsert<[UserHourIncrement]> = {
  table: 'user_click_hourly',
  key: ['user_id', 'hour_start'],
  sums: ['clicks', 'bots'],
  values: (h) => [h.userId, h.hourStart, h.clicks, h.bots],
};

/** Human clicks per link, day, rule or variant, and visitor (SPEC §21: by_rule, by_variant). */
export const LINK_DAILY_CHOICES: RollupUpsert<[ChoiceIncrement]> = {
  table: 'link_click_daily_choices',
  key: ['link_id', 'day_start', 'kind', 'value', 'visitor'],
  sums: ['clicks'],
  values: (c) => [c.linkId, c.dayStart, c.kind, c.value, c.visitor, c.clicks],
};

/** A daily top-value row (capped: daily-values.ts): its owner (a link or a user), kind, day, value and clicks. */
type DailyValueRow = [owner: number, kind: string, dayStart: number, value: string, clicks: number];

/** The daily values of links or users: the first key column names the owner. */
export type DailyValuesTable = RollupUpsert<DailyValueRow>;

export const LINK_DAILY_VALUES: DailyValuesTable = {
  table: 'link_click_daily_values',
  key: ['link_id', 'kind', 'day_start', 'value'],
  sums: ['clicks'],
  values: (...row) => row,
};

export const USER_DAILY_VALUES: DailyValuesTable = {
  table: 'user_click_daily_values',
  key: ['user_id', 'kind', 'day_start', 'value'],
  sums: ['clicks'],
  values: (...row) => row,
};

/** A click's record (SPEC §15): inserted once, never added to. */
export const CLICK_RECORDS = {
  table: 'clicks',
  columns: [
    'link_id',
    'short_code',
    'clicked_at',
    'ip',
    'user_agent',
    'referrer',
    'click_key',
    'is_bot',
    'browser',
    'os',
    'device',
    'country',
    'imported',
    'alias',
    'domain',
    'rule_id',
    'variant_id',
  ],
  values: (e: ClickEvent, f: ClickFacts, imported: boolean): unknown[] => [
    e.linkId,
    e.shortCode,
    e.clickedAt,
    e.ip,
    e.userAgent,
    e.referrer,
    e.key ?? null,
    f.isBot ? 1 : 0,
    f.browser,
    f.os,
    f.device,
    f.country,
    imported ? 1 : 0,
    e.alias ?? null,
    e.domain ?? null,
    e.ruleId ?? null,
    e.variantId ?? null,
  ],
} as const;

/** How a link's counter takes a batch's figure: added, or kept when earlier (`min`) or later (`max`). */
export type CounterMerge = 'add' | 'min' | 'max';

/**
 * The counters on a link's row (`links`), from its increment. `unique_visitors` is not among them: it is known
 * only once the visitors are written (each writer adds it as its own `add` column).
 */
export const LINK_COUNTERS: ReadonlyArray<{ column: string; merge: CounterMerge; value(g: LinkIncrement): number }> = [
  { column: 'click_count', merge: 'add', value: (g) => g.clicks },
  { column: 'bot_clicks', merge: 'add', value: (g) => g.bots },
  { column: 'first_click_at', merge: 'min', value: (g) => g.firstAt },
  { column: 'last_click_at', merge: 'max', value: (g) => g.lastAt },
];
