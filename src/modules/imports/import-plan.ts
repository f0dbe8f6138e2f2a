import { ALIAS_PATTERN, checkOriginalUrl, CODE_PATTERN, isReservedCode, MAX_ALIASES, MAX_TAGS, MAX_TITLE_LENGTH, tagsText } from '../links/index.js';
import { normalizeHostname } from '../domains/index.js';
import type { ImportItem, NotImported } from './import-item.js';

/** A source item as the Ferry link it becomes, or why it cannot become one. */
export type ItemPlan = { ok: true; link: PlannedLink } | { ok: false; reason: string };

export interface PlannedLink {
  /** Ferry's domain: null for the default domain */
  domain: string | null;
  /** the item's own code when it fits short_code; null: a generated one (the item's code then needs an alias) */
  shortCode: string | null;
  /** further names on the same domain: the item's own code first when it does not fit short_code, then its aliases */
  aliases: string[];
  originalUrl: string;
  createdAt: number | null;
  expiresAt: number | null;
  maxVisits: number | null;
  forwardQuery: boolean;
  tags: string;
  title: string | null;
  notes: NotImported[];
}

export interface PlanContext {
  publicBaseUrl: string;
  /** the source's names of its default domain (besides null) */
  sourceDefaults: readonly string[];
  /** FROM → TO (a host name, or `default`); `default` as FROM names the source's default domain */
  domainMap: Readonly<Record<string, string>>;
}

const FITS_SHORT_CODE = new RegExp(CODE_PATTERN);
const FITS_ALIAS = new RegExp(ALIAS_PATTERN);
const fitsAlias = (name: string): boolean => FITS_ALIAS.test(name) && !isReservedCode(name);

/**
 * The link's aliases (SPEC §20): a code that does not fit short_code becomes the first (the link gets a
 * generated code), then the item's further codes; those no alias can hold are dropped, said in `notes`.
 */
function aliasesOf(item: ImportItem, codeIsAlias: boolean, notes: NotImported[]): string[] {
  const own = codeIsAlias ? [item.code] : [];
  // An alias equal to the item's own code (when that is the short code) would only collide with it.
  const wanted = [...new Set([...own, ...item.aliases.filter((a) => a !== item.code)])];
  const kept = wanted.filter(fitsAlias);
  if (kept.length !== wanted.length) notes.push({ field: 'aliases', reason: `codes that are not 1-64 of 0-9a-zA-Z_- (or are reserved) were dropped: ${wanted.filter((a) => !fitsAlias(a)).join(', ')}` });
  if (kept.length > MAX_ALIASES) notes.push({ field: 'aliases', reason: `only the first ${MAX_ALIASES} aliases were kept` });
  return kept.slice(0, MAX_ALIASES);
}
const TAG = /^[a-z0-9-]{1,32}$/;

/**
 * Where a source's domain lands in Ferry: null for Ferry's default domain (the source's default, or the host of
 * PUBLIC_BASE_URL), a host name as Ferry keeps it, or undefined when the name is no host name Ferry can serve
 * (an address, a port, a single label).
 */
export function mapDomain(sourceDomain: string | null, ctx: PlanContext): string | null | undefined {
  const domain = sourceDomain?.toLowerCase() ?? null;
  const isDefault = domain === null || ctx.sourceDefaults.includes(domain);
  const mapped = (domain !== null ? ctx.domainMap[domain] : undefined) ?? (isDefault ? ctx.domainMap.default : undefined);
  const host = mapped !== undefined ? (mapped === 'default' ? null : mapped) : isDefault ? null : domain;
  if (host === null) return null;
  const name = normalizeHostname(host);
  if (name === null) return undefined;
  return name === new URL(ctx.publicBaseUrl).hostname.toLowerCase() ? null : name;
}

/**
 * The Ferry link a source item becomes (SPEC §20): the same code where it fits short_code, the target checked
 * by the same rules as a link created through the API, tags and title kept where Ferry can hold them. What
 * is dropped is said in `notes`, per item.
 */
export function planItem(item: ImportItem, ctx: PlanContext): ItemPlan {
  const url = checkOriginalUrl(item.target, ctx.publicBaseUrl);
  if (!url.ok) return { ok: false, reason: `the target ${url.reason}` };
  const domain = mapDomain(item.domain, ctx);
  if (domain === undefined) return { ok: false, reason: `the domain ${JSON.stringify(item.domain)} is not a host name Ferry can serve: map it with --domain-map (domain_map)` };
  const notes = [...item.notImported];
  const fits = item.code !== '' && FITS_SHORT_CODE.test(item.code) && !isReservedCode(item.code);
  if (item.code !== '' && !fits && !fitsAlias(item.code)) {
    return { ok: false, reason: `the code ${JSON.stringify(item.code)} fits neither short_code (1-8 of 0-9a-zA-Z) nor an alias (1-64 of 0-9a-zA-Z_-), or is reserved` };
  }
  const codeIsAlias = item.code !== '' && !fits;
  if (codeIsAlias) notes.push({ field: 'code', reason: `${JSON.stringify(item.code)} does not fit short_code (1-8 of 0-9a-zA-Z): it is an alias of a generated code` });
  const aliases = aliasesOf(item, codeIsAlias, notes);
  const tags = item.tags.map((t) => t.trim().toLowerCase().replace(/[\s_]+/g, '-'));
  const kept = [...new Set(tags.filter((t) => TAG.test(t)))];
  if (kept.length !== new Set(tags).size) notes.push({ field: 'tags', reason: `tags that are not 1-32 of a-z 0-9 - were dropped: ${tags.filter((t) => !TAG.test(t)).join(', ')}` });
  if (kept.length > MAX_TAGS) notes.push({ field: 'tags', reason: `only the first ${MAX_TAGS} tags were kept` });
  let title = item.title?.trim() || null;
  if (title !== null && [...title].length > MAX_TITLE_LENGTH) {
    title = [...title].slice(0, MAX_TITLE_LENGTH).join('');
    notes.push({ field: 'title', reason: `shortened to ${MAX_TITLE_LENGTH} characters` });
  }
  const maxVisits = item.maxVisits !== null && Number.isSafeInteger(item.maxVisits) && item.maxVisits >= 1 ? item.maxVisits : null;
  if (item.maxVisits !== null && maxVisits === null) notes.push({ field: 'max_visits', reason: `${item.maxVisits} is not a visit limit; the link has none` });
  return {
    ok: true,
    link: {
      domain,
      shortCode: fits ? item.code : null,
      aliases,
      originalUrl: url.url,
      createdAt: item.createdAt,
      expiresAt: item.expiresAt,
      maxVisits,
      forwardQuery: item.forwardQuery,
      tags: tagsText(kept.slice(0, MAX_TAGS)),
      title,
      notes,
    },
  };
}
