import type { Generated } from 'kysely';

export interface ClicksTable {
  id: Generated<number>;
  link_id: number;
  short_code: string;
  clicked_at: number;
  ip: string | null;
  user_agent: string | null;
  referrer: string | null;
  /** the visit's random id from the click stream (scale-out), null for clicks of the in-process queue */
  click_key: string | null;
  /** 1 for a bot, crawler, unfurler or script (isbot), 0 for a person (SPEC §15) */
  is_bot: Generated<number>;
  browser: string | null;
  os: string | null;
  device: 'desktop' | 'mobile' | 'tablet' | 'bot' | 'other' | null;
  /** ISO 3166-1 alpha-2 */
  country: string | null;
  /** 1 for a visit brought over by an importer (SPEC §20) */
  imported: Generated<number>;
  /** the alias the visit came through (SPEC §20); null: through the code */
  alias: string | null;
  /** the host name of the domain the visit came in on (SPEC §19); null: the default domain */
  domain: string | null;
  /** the routing rule that chose the URL (SPEC §21); null: none */
  rule_id: string | null;
  /** the A/B variant the visit was sent to (SPEC §21); null: none */
  variant_id: string | null;
}

export interface LinkClickHourlyTable {
  link_id: number;
  hour_start: number;
  /** every click: humans and bots */
  clicks: number;
  bots: Generated<number>;
}

/** The kinds of top list kept per link and day; `link` (the short code) only per user. */
export type ValueKind = 'referrer' | 'user_agent' | 'browser' | 'os' | 'device' | 'country';
export type UserValueKind = ValueKind | 'link';

export interface UserClickHourlyTable {
  user_id: number;
  hour_start: number;
  clicks: number;
  bots: Generated<number>;
}

export interface UserClickDailyValuesTable {
  user_id: number;
  kind: UserValueKind;
  day_start: number;
  value: string;
  clicks: number;
}

/** The click journal's mark: how many of a journal's clicks are committed (modules/clicks/transport/click-journal.ts). */
export interface ClickJournalMarksTable {
  journal: string;
  committed: number;
  /** a window partly written (migration 013); null otherwise */
  window_end: number | null;
  window_link: number | null;
  window_count: number | null;
}

export interface ClickIngestTable {
  writer: string;
  fresh_as_of: number;
}

export interface LinkClickDailyValuesTable {
  link_id: number;
  kind: ValueKind;
  day_start: number;
  value: string;
  clicks: number;
}

export interface LinkVisitorsTable {
  link_id: number;
  ip: string;
}

/** What routed a link's visits (SPEC §21): a routing rule, or an A/B variant. */
export type ChoiceKind = 'rule' | 'variant';

/** Human clicks per link, UTC day, rule or variant, and visitor ('' for none): by_rule and by_variant (migration 041). */
export interface LinkClickDailyChoicesTable {
  link_id: number;
  day_start: number;
  kind: ChoiceKind;
  value: string;
  visitor: string;
  clicks: number;
}
