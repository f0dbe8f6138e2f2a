import type { LinkRow } from '../../db/types.js';
import { isoTime } from '../../lib/common.schemas.js';
import { aliasesOf } from './link-aliases.js';
import { tagsOf } from './link-rows.js';
import type { Link } from './links.schemas.js';
import { previewOf } from './link-preview.js';

/** Where a link lives (link-domains.ts): its short URL on its domain, and the domain's name (null: the default one). */
export interface LinkAddress {
  shortUrl(row: Pick<LinkRow, 'domain_id' | 'short_code'>): string;
  nameOf(domainId: number): string | null;
}

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
  });
