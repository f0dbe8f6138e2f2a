import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table types. Every instant is stored as integer milliseconds since the epoch (bigint on PostgreSQL,
 * INTEGER on SQLite): the same comparisons, keyset cursors and bucket arithmetic work on both engines, and
 * the API turns them into ISO 8601 strings at the edge.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  username_lower: string;
  email: string;
  email_lower: string;
  password_hash: string;
  role: 'user' | 'admin';
  status: 'pending' | 'active' | 'suspended';
  name: string | null;
  age: number | null;
  version: number;
  created_at: number;
  updated_at: number;
  /** epoch ms (a whole second): tokens issued before it are refused (a password, role or status change) */
  tokens_valid_after: Generated<number>;
  /** the click_count of the user's links that are gone (deleted or expired), kept for the account's lifetime figures */
  deleted_link_clicks: Generated<number>;
  /** of those, the bots' */
  deleted_link_bots: Generated<number>;
}

export interface TokensTable {
  jti: string;
  user_id: number;
  issued_at: number;
  expires_at: number;
}

export interface RevokedTokensTable {
  jti: string;
  expires_at: number;
}

export interface OrdersTable {
  id: Generated<number>;
  user_id: number;
  item_id: number;
  quantity: number;
  created_at: number;
}

export interface IdempotencyKeysTable {
  /** whose key: `user:{id}`, or `ip:{address}` for anonymous callers of optional routes */
  scope: string;
  idem_key: string;
  user_id: number | null;
  /** sha256 of method, route, parameters and canonical body */
  fingerprint: string;
  /** set while a request holds the key; null once the response is stored */
  lock_id: string | null;
  locked_at: number | null;
  response_status: number | null;
  /** JSON object of the headers that matter (Location) */
  response_headers: string | null;
  /** JSON text of the response body */
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

/**
 * Every short code ever issued, per domain; a retired row is the tombstone of a deleted or expired link. The
 * one namespace of a domain's codes (and of other names of a link that come to share it): one lookup by
 * (domain_id, code) answers a visit.
 */
export interface LinkCodesTable {
  /** 0: the default domain */
  domain_id: Generated<number>;
  code: string;
  /** the link this code stands for (kept in a tombstone) */
  link_id: number | null;
  retired_at: number | null;
  retired_reason: 'deleted' | 'expired' | null;
}

export interface LinksTable {
  id: Generated<number>;
  short_code: string;
  /** 0: the default domain (the host of PUBLIC_BASE_URL); otherwise domains.id */
  domain_id: Generated<number>;
  user_id: number | null;
  original_url: string;
  expires_at: number | null;
  created_at: number;
  /** the last change through the API (= created_at until the first) */
  updated_at: number;
  /** +1 on every change: the ETag "link-{id}-v{version}" */
  version: Generated<number>;
  /** null: no limit */
  max_visits: number | null;
  /** human GET visits redirected so far (the visit limit's counter; not click_count, which is written later) */
  visit_count: Generated<number>;
  /** 0 or 1 */
  forward_query: Generated<number>;
  password_hash: string | null;
  /** comma-separated, lower case, in the order given (a copy of link_tags for reading) */
  tags: Generated<string>;
  /** at most 200 characters; null: none */
  title: Generated<string | null>;
  /** the live aliases (SPEC §20), comma-separated in the order given (a copy of link_codes for reading) */
  aliases: Generated<string>;
  /** when an admin disabled the link (visits answer 410 LINK_DISABLED); null: not disabled */
  disabled_at: Generated<number | null>;
  /** the admin's reason, at most 500 characters; null: none given */
  disabled_reason: Generated<string | null>;
  click_count: Generated<number>;
  /** of click_count, the clicks by bots (SPEC §15) */
  bot_clicks: Generated<number>;
  unique_visitors: Generated<number>;
  first_click_at: Generated<number | null>;
  last_click_at: Generated<number | null>;
}

export interface LinkTagsTable {
  link_id: number;
  tag: string;
}

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
}

export type ImportJobState = 'running' | 'done' | 'failed' | 'interrupted';

export interface ImportJobsTable {
  id: Generated<number>;
  source: string;
  /** the source's kind and address (never a key): what makes a re-run "the same source" */
  source_key: string;
  /** JSON of the options, without the API key or a database password */
  options: string;
  owner_id: number | null;
  created_by: number | null;
  state: ImportJobState;
  dry_run: number;
  on_conflict: 'skip' | 'fail';
  items: Generated<number>;
  created: Generated<number>;
  unchanged: Generated<number>;
  conflicts: Generated<number>;
  failed: Generated<number>;
  visits: Generated<number>;
  error: string | null;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
}

export type ImportOutcome = 'created' | 'unchanged' | 'conflict' | 'failed' | 'would-create';

export interface ImportItemsTable {
  job_id: number;
  seq: number;
  /** the item as the source names it: "domain/code", or "line N" */
  source_ref: string;
  outcome: ImportOutcome;
  short_code: string | null;
  message: string | null;
}

export interface ImportLinksTable {
  source_key: string;
  /** '' for the source's default domain */
  source_domain: string;
  source_code: string;
  link_id: number;
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

/** SPEC §14: only a keyed hash of the key is kept; `scopes` is space-separated. */
export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
  /** the domains the key is limited to, comma-separated ids (0: the default domain); null: not limited */
  domains: string | null;
}

/** SPEC §19: a host name links may live on; `hostname` is stored lower case, without a trailing dot. */
export interface DomainsTable {
  id: Generated<number>;
  hostname: string;
  owner_id: number | null;
  /** the verification token: in the TXT record's value and the HTTP path */
  token: string;
  verified_at: number | null;
  /** 'http' | 'https' for short URLs on this domain; null: PUBLIC_BASE_URL's scheme */
  scheme: string | null;
  root_redirect: string | null;
  not_found_redirect: string | null;
  expired_redirect: string | null;
  /** the last daily re-check of a verified domain */
  checked_at: number | null;
  /** since when re-checks have failed (null: the last one passed); 7 days of it and no new links */
  failing_since: number | null;
  check_message: string | null;
  version: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** Link changes made by another process than the server, for its redirect cache (embedded engine only; migration 027). */
export interface LinkChangesTable {
  seq: Generated<number>;
  message: string;
  at: number;
}

export interface Database {
  domains: DomainsTable;
  users: UsersTable;
  tokens: TokensTable;
  revoked_tokens: RevokedTokensTable;
  orders: OrdersTable;
  idempotency_keys: IdempotencyKeysTable;
  link_codes: LinkCodesTable;
  links: LinksTable;
  link_tags: LinkTagsTable;
  clicks: ClicksTable;
  link_click_hourly: LinkClickHourlyTable;
  link_click_daily_values: LinkClickDailyValuesTable;
  link_visitors: LinkVisitorsTable;
  user_click_hourly: UserClickHourlyTable;
  user_click_daily_values: UserClickDailyValuesTable;
  click_ingest: ClickIngestTable;
  click_journal_marks: ClickJournalMarksTable;
  api_keys: ApiKeysTable;
  import_jobs: ImportJobsTable;
  import_items: ImportItemsTable;
  import_links: ImportLinksTable;
  link_changes: LinkChangesTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type OrderRow = Selectable<OrdersTable>;
export type NewOrderRow = Insertable<OrdersTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type LinkRow = Selectable<LinksTable>;
export type NewLinkRow = Insertable<LinksTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type ImportJobRow = Selectable<ImportJobsTable>;
export type DomainRow = Selectable<DomainsTable>;
