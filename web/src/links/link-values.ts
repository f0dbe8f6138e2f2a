import type { Link as ShortLink } from '../api/client';
import { instantFromLocalInput, localInputFromInstant } from './local-time';

/**
 * The link form's values as the inputs hold them (text), and the API bodies they stand for: a whole body
 * for POST /links, and for PATCH a JSON merge patch of only what changed (RFC 7396: null clears).
 */
export interface LinkValues {
  original_url: string;
  short_code: string;
  /** `datetime-local`, in the browser's zone */
  expires_at: string;
  max_visits: string;
  /** a new password; empty keeps the current one (or none, when creating) */
  password: string;
  removePassword: boolean;
  /** comma- or space-separated */
  tags: string;
  forward_query: boolean;
  title: string;
  /** the link's domain; '' for the default domain */
  domain: string;
  /** further names of the link (SPEC §20), comma- or space-separated */
  aliases: string;
  /** where visits go while the destination is broken (SPEC §24); empty: none */
  fallback_url: string;
}

export const EMPTY_LINK_VALUES: LinkValues = {
  original_url: '',
  short_code: '',
  expires_at: '',
  max_visits: '',
  password: '',
  removePassword: false,
  tags: '',
  forward_query: false,
  title: '',
  domain: '',
  aliases: '',
  fallback_url: '',
};

export function valuesFromLink(link: ShortLink): LinkValues {
  return {
    original_url: link.original_url,
    short_code: link.short_code,
    expires_at: link.expires_at ? localInputFromInstant(link.expires_at) : '',
    max_visits: link.max_visits === null ? '' : String(link.max_visits),
    password: '',
    removePassword: false,
    tags: link.tags.join(', '),
    forward_query: link.forward_query,
    title: link.title ?? '',
    domain: link.domain ?? '',
    aliases: link.aliases.join(', '),
    fallback_url: link.fallback_url ?? '',
  };
}

/** "Launch, q4  promo" → ['launch', 'q4', 'promo']; the API checks each tag and says which one is wrong. */
export const tagsFromText = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);
/** Aliases are typed like tags (case kept: aliases are case-sensitive). */
export const aliasesFromText = tagsFromText;

/** A whole number as typed, or the text itself so that the API's message names what is wrong with it. */
function visitsFromText(text: string): number | string {
  const trimmed = text.trim();
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : trimmed;
}

export interface LinkBody {
  original_url: string;
  short_code?: string;
  expires_at?: string;
  max_visits?: number;
  password?: string;
  tags?: string[];
  forward_query?: boolean;
  title?: string;
  domain?: string;
  aliases?: string[];
  fallback_url?: string;
}

/** POST /links: only the fields filled in (the API's defaults for the others). */
export function createBody(v: LinkValues): LinkBody {
  const tags = tagsFromText(v.tags);
  const aliases = aliasesFromText(v.aliases);
  const visits = v.max_visits.trim() ? visitsFromText(v.max_visits) : undefined;
  return {
    original_url: v.original_url.trim(),
    ...(v.short_code.trim() ? { short_code: v.short_code.trim() } : {}),
    ...(v.expires_at ? { expires_at: instantFromLocalInput(v.expires_at) } : {}),
    // A mistyped number goes as typed: the API's message then stands beside the field.
    ...(visits !== undefined ? { max_visits: visits as number } : {}),
    ...(v.password ? { password: v.password } : {}),
    ...(tags.length ? { tags } : {}),
    ...(v.forward_query ? { forward_query: true } : {}),
    ...(v.title.trim() ? { title: v.title.trim() } : {}),
    ...(v.domain ? { domain: v.domain } : {}),
    ...(aliases.length ? { aliases } : {}),
    ...(v.fallback_url.trim() ? { fallback_url: v.fallback_url.trim() } : {}),
  };
}

export interface LinkPatch {
  original_url?: string;
  expires_at?: string | null;
  max_visits?: number | null;
  password?: string | null;
  tags?: string[] | null;
  forward_query?: boolean;
  title?: string | null;
  domain?: string | null;
  aliases?: string[] | null;
  fallback_url?: string | null;
}

/** PATCH /links/{code}: what differs from the link as it was read; an emptied field is null (cleared). */
export function patchBody(link: ShortLink, v: LinkValues): LinkPatch {
  const was = valuesFromLink(link);
  const patch: LinkPatch = {};
  if (v.original_url.trim() !== was.original_url) patch.original_url = v.original_url.trim();
  if (v.expires_at !== was.expires_at) patch.expires_at = v.expires_at ? instantFromLocalInput(v.expires_at) : null;
  if (v.max_visits.trim() !== was.max_visits)
    patch.max_visits = v.max_visits.trim() ? (visitsFromText(v.max_visits) as number) : null;
  const tags = tagsFromText(v.tags);
  if (tags.join(',') !== link.tags.join(',')) patch.tags = tags.length ? tags : null;
  if (v.forward_query !== was.forward_query) patch.forward_query = v.forward_query;
  if (v.title.trim() !== was.title) patch.title = v.title.trim() ? v.title.trim() : null;
  if (v.domain !== was.domain) patch.domain = v.domain || null;
  const aliases = aliasesFromText(v.aliases);
  if (aliases.join(',') !== link.aliases.join(',')) patch.aliases = aliases.length ? aliases : null;
  if (v.fallback_url.trim() !== was.fallback_url) patch.fallback_url = v.fallback_url.trim() || null;
  if (v.password) patch.password = v.password;
  else if (v.removePassword && link.has_password) patch.password = null;
  return patch;
}
