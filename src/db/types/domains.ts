import type { Generated, Selectable } from 'kysely';

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
  /** SPEC §24 (migration 048): where visits of a broken link without fallback_url go; null: its destination */
  broken_redirect: Generated<string | null>;
  /** SPEC §21 app links, JSON text served on the domain's host (an object, an array); null: none (migration 042) */
  apple_app_site_association: Generated<string | null>;
  android_asset_links: Generated<string | null>;
  /** SPEC §24: days its links' click records are kept; null: CLICK_RETENTION_DAYS; 0: forever (migration 047) */
  click_retention_days: Generated<number | null>;
  /** the last daily re-check of a verified domain */
  checked_at: number | null;
  /** since when re-checks have failed (null: the last one passed); 7 days of it and no new links */
  failing_since: number | null;
  check_message: string | null;
  version: Generated<number>;
  created_at: number;
  updated_at: number;
}

export type DomainRow = Selectable<DomainsTable>;

/** The codes a deleted domain issued, kept by host name for the next claim of it (SPEC §25; migration 035). */
export interface RetiredDomainCodesTable {
  hostname: string;
  /** 0: every later claim of the name (the domain was verified); else only this user's later claims */
  scope: number;
  code: string;
  link_id: number | null;
  retired_at: number;
  retired_reason: 'deleted' | 'expired';
}
