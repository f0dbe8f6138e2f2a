import type { Generated, Insertable, Selectable } from 'kysely';

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
  /** SPEC §21: the card unfurlers get, JSON `{ title, description?, image_url? }`; null: none (migration 042) */
  preview: Generated<string | null>;
  /** the live aliases (SPEC §20), comma-separated in the order given (a copy of link_codes for reading) */
  aliases: Generated<string>;
  /** when an admin disabled the link (visits answer 410 LINK_DISABLED); null: not disabled */
  disabled_at: Generated<number | null>;
  /** the admin's reason, at most 500 characters; null: none given */
  disabled_reason: Generated<string | null>;
  /** SPEC §21: the routing rules as JSON (modules/links/rules/); null: none */
  rules: Generated<string | null>;
  /** SPEC §24 (migration 048): 'ok' | 'broken' | 'unknown' */
  health_status: Generated<'ok' | 'broken' | 'unknown'>;
  health_checked_at: Generated<number | null>;
  health_http_status: Generated<number | null>;
  /** what the last check found wrong, in words for the owner (never an address); null: nothing */
  health_error: Generated<string | null>;
  /** since when health_status holds (null: unknown since the link or its destination is new) */
  health_since: Generated<number | null>;
  /** failed checks in a row (2: broken) */
  health_failures: Generated<number>;
  /** when the destination is due for a check (0: now); null: not scheduled */
  next_check_at: Generated<number | null>;
  /** where the link's visits go while it is broken; null: the domain's broken_redirect, else the destination */
  fallback_url: Generated<string | null>;
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

/**
 * Per owner and domain: their links and the sums of the links' counters, kept by the database on every write to
 * `links` (db/owner-totals.ts, migration 050). The click times only move outwards (deleted links' clicks stay).
 */
export interface LinkOwnerTotalsTable {
  user_id: number;
  domain_id: number;
  links: number;
  clicks: number;
  bots: number;
  unique_visitors: number;
  first_click_at: number | null;
  last_click_at: number | null;
}

/**
 * PostgreSQL only (migration 056): each link's owner and click count, kept by a trigger on `links`, whose indexes
 * give the lists sorted by clicks their order without indexing the counters of `links`.
 */
export interface LinkClickOrderTable {
  link_id: number;
  /** links.user_id */
  owner_id: number | null;
  /** links.click_count */
  clicks: number;
}

/**
 * PostgreSQL only (migration 059): what `q` searches of a link, lower-cased in one text, and the columns a list's
 * total filters by, kept by a trigger on `links`: a search no index narrows is counted here.
 */
export interface LinkSearchTextTable {
  link_id: number;
  /** links.user_id */
  owner_id: number | null;
  domain_id: number;
  expires_at: number | null;
  /** the title, the code, the aliases and the URL, each lowered as `ilike` lowers it, joined by chr(1) */
  text: string;
}

/** Per owner, tag and domain: how many of the owner's links carry the tag (db/owner-tags.ts, migration 050). */
export interface LinkOwnerTagsTable {
  user_id: number;
  tag: string;
  domain_id: number;
  links: number;
}

export type LinkRow = Selectable<LinksTable>;
export type NewLinkRow = Insertable<LinksTable>;
