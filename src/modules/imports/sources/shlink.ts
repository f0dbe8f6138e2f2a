import { parseSourceDate, type ImportItem, type ImportVisit, type SourceEntry } from '../import-item.js';
import { apiUrl, arrayOfObjects, getSourceJson, isObject, stringOrNull } from './source-http.js';

/**
 * Shlink's REST API v3 (its OpenAPI description: docs/swagger/ in shlinkio/shlink). Short URLs come page by page
 * from /rest/v3/short-urls (`{ shortUrls: { data, pagination: { currentPage, pagesCount } } }`), each one's visits
 * from /rest/v3/short-urls/{shortCode}/visits (`{ visits: { data, pagination } }`, `?domain=` for a code of
 * another domain), both with the `X-Api-Key` header.
 */
export interface ShlinkOptions {
  url: string;
  apiKey: string;
  pageSize?: number;
}

const PAGE_SIZE = 100;

export async function* readShlink(options: ShlinkOptions): AsyncGenerator<SourceEntry> {
  const headers = { 'X-Api-Key': options.apiKey };
  for await (const row of pages(options, headers, '/rest/v3/short-urls', {}, ['shortUrls'])) {
    yield shlinkItem(row, options, headers);
  }
}

async function* pages(
  options: ShlinkOptions, headers: Record<string, string>, path: string, query: Record<string, string | undefined>, key: string[],
): AsyncGenerator<Record<string, unknown>> {
  const itemsPerPage = options.pageSize ?? PAGE_SIZE;
  for (let page = 1; ; page += 1) {
    const body = await getSourceJson(apiUrl(options.url, path, { ...query, page, itemsPerPage }), headers);
    const rows = arrayOfObjects(body, [...key, 'data'], 'Shlink');
    yield* rows;
    const pagination = (body as Record<string, Record<string, Record<string, unknown>>>)[key[0]!]!.pagination;
    const pagesCount = isObject(pagination) && typeof pagination.pagesCount === 'number' ? pagination.pagesCount : page;
    if (rows.length === 0 || page >= pagesCount) return;
  }
}

function shlinkItem(row: Record<string, unknown>, options: ShlinkOptions, headers: Record<string, string>): ImportItem {
  const code = String(row.shortCode ?? '');
  const domain = stringOrNull(row.domain);
  const meta = isObject(row.meta) ? row.meta : {};
  const item: ImportItem = {
    domain,
    code,
    target: String(row.longUrl ?? ''),
    createdAt: parseSourceDate(stringOrNull(row.dateCreated)),
    expiresAt: parseSourceDate(stringOrNull(meta.validUntil)),
    tags: Array.isArray(row.tags) ? row.tags.map(String) : [],
    title: stringOrNull(row.title),
    maxVisits: typeof meta.maxVisits === 'number' ? meta.maxVisits : null,
    forwardQuery: row.forwardQuery === true,
    aliases: [],
    visitCount: null,
    visits: null,
    notImported: [],
  };
  if (stringOrNull(meta.validSince) !== null) {
    item.notImported.push({ field: 'validSince', reason: 'Ferry links are valid from their creation; the start date is dropped' });
  }
  if (row.hasRedirectRules === true) {
    item.notImported.push({ field: 'redirectRules', reason: 'Ferry has no per-device redirect rules; the link goes to its long URL' });
  }
  const path = `/rest/v3/short-urls/${encodeURIComponent(code)}/visits`;
  item.visits = visitsOf(options, headers, path, domain ?? undefined);
  return item;
}

async function* visitsOf(options: ShlinkOptions, headers: Record<string, string>, path: string, domain?: string): AsyncGenerator<ImportVisit> {
  for await (const v of pages(options, headers, path, { domain }, ['visits'])) {
    const location = isObject(v.visitLocation) ? v.visitLocation : {};
    const country = stringOrNull(location.countryCode);
    yield {
      at: parseSourceDate(stringOrNull(v.date)) ?? 0,
      referrer: stringOrNull(v.referer),
      userAgent: stringOrNull(v.userAgent),
      ip: null,
      country: country !== null && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
      isBot: typeof v.potentialBot === 'boolean' ? v.potentialBot : null,
    };
  }
}
