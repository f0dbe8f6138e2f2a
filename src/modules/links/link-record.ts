import type { LinkRow } from '../../db/types.js';
import { isoTime } from '../../lib/common.schemas.js';
import { aliasesOf } from './link-aliases.js';
import { tagsOf } from './link-rows.js';
import type { Link, LinkHealth } from './links.schemas.js';
import { previewOf } from './link-preview.js';

/** Where a link lives (link-domains.ts): its short URL on its domain, and the domain's name (null: the default one). */
export interface LinkAddress {
  shortUrl(row: Pick<LinkRow, 'domain_id' | 'short_code'>): string;
  nameOf(domainId: number): string | null;
}

/** SPEC §24: the destination checks' verdict as the API shows it. */
export const healthOf = (
  row: Pick<LinkRow, 'health_status' | 'health_checked_at' | 'health_http_status' | 'health_error' | 'health_since'>,
): LinkHealth => ({
  status: row.health_status,
  checked_at: row.health_checked_at === null ? null : isoTime(Number(row.health_checked_at)),
  http_status: row.health_http_status === null ? null : Number(row.health_http_status),
  error: row.health_error,
  since: row.health_since === null ? null : isoTime(Number(row.health_since)),
});

/** The API's view of a link row (v1 names; links.v2.ts renames). */
export const linkRecord =
  (publicBaseUrl: string, domains?: LinkAddress) =>
  (row: LinkRow): Link => ({
    id: row.id,
    short_code: row.short_code,
    short_url: domains ? domains.shortUrl(row) : `${publicBaseUrl}/${row.short_code}`,
    domain: domains ? domains.nameOf(row.domain_id) : null,
    original_url: row.original_url,
    user_id: row.user_id,
    expires_at: row.expires_at === null ? null : isoTime(row.expires_at),
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
    click_count: Number(row.click_count),
    human_clicks: Number(row.click_count) - Number(row.bot_clicks),
    bot_clicks: Number(row.bot_clicks),
    max_visits: row.max_visits === null ? null : Number(row.max_visits),
    forward_query: Boolean(row.forward_query),
    tags: tagsOf(row),
    has_password: row.password_hash !== null,
    title: row.title,
    aliases: aliasesOf(row),
    disabled: row.disabled_at !== null,
    disabled_reason: row.disabled_reason,
    preview: previewOf(row.preview),
    fallback_url: row.fallback_url,
    health: healthOf(row),
  });
