import {
  parseSourceDate,
  readItem,
  visitDate,
  type ImportItem,
  type ImportVisit,
  type SourceEntry,
} from '../import-item.js';
import { shlinkRules } from './shlink-rules.js';
import { apiUrl, arrayOfObjects, getSourceJson, isObject, stringOrNull, type SourceLimits } from './source-http.js';

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
  limits: SourceLimits;
}

/** Short URLs per page, and visits per page: a visit is about 300 bytes of JSON, so a page stays far below 10 MiB. */
const PAGE_SIZE = 100;
const VISITS_PAGE_SIZE = 1_000;

export async function* readShlink(options: ShlinkOptions): AsyncGenerator<SourceEntry> {
  const headers = { 'X-Api-Key': options.apiKey };
  // Visits up to the start of the run: a fixed set, so that pages do not shift while they are read.
  const until = new Date().toISOString();
  for await (const row of pages(options, headers, '/rest/v3/short-urls', {}, ['shortUrls'])) {
    const rules = row.hasRedirectRules === true ? await rulesOf(options, headers, row) : null;
    yield readItem(`${stringOrNull(row.domain) ?? ''}/${String(row.shortCode ?? '')}`, () =>
      shlinkItem(row, { ...options, until }, headers, rules),
    );
  }
}

/**
 * A short URL's redirect rules (Shlink 4.0+), as Ferry's rules and what could not come over. A Shlink that does
 * not answer them (an older one, a code gone since the list was read) costs the link its rules, said per item;
 * the run goes on. Only a run that is stopped stops here.
 */
async function rulesOf(
  options: ShlinkOptions,
  headers: Record<string, string>,
  row: Record<string, unknown>,
): Promise<ReturnType<typeof shlinkRules>> {
  const path = `/rest/v3/short-urls/${encodeURIComponent(String(row.shortCode ?? ''))}/redirect-rules`;
  const domain = stringOrNull(row.domain) ?? undefined;
  try {
    return shlinkRules(await getSourceJson(apiUrl(options.url, path, { domain }), headers, options.limits));
  } catch (error) {
    if (options.limits.signal?.aborted) throw error;
    const reason = `the redirect rules could not be read (${(error as Error).message}); the link goes to its long URL`;
    return { rules: [], notes: [{ field: 'redirectRules', reason }] };
  }
}

type Query = Record<string, string | undefined>;

/** One page of a list: its rows and how many pages the list has. */
async function page(
  options: ShlinkOptions,
  headers: Record<string, string>,
  path: string,
  query: Query,
  key: string,
  n: number,
) {
  const size = options.pageSize ?? (key === 'visits' ? VISITS_PAGE_SIZE : PAGE_SIZE);
  const body = await getSourceJson(
    apiUrl(options.url, path, { ...query, page: n, itemsPerPage: size }),
    headers,
    options.limits,
  );
  const rows = arrayOfObjects(body, [key, 'data'], 'Shlink');
  const pagination = (body as Record<string, Record<string, Record<string, unknown>>>)[key]!.pagination;
  const pagesCount = isObject(pagination) && typeof pagination.pagesCount === 'number' ? pagination.pagesCount : n;
  return { rows, pagesCount };
}

async function* pages(
  options: ShlinkOptions,
  headers: Record<string, string>,
  path: string,
  query: Query,
  key: string[],
): AsyncGenerator<Record<string, unknown>> {
  for (let n = 1; ; n += 1) {
    const { rows, pagesCount } = await page(options, headers, path, query, key[0]!, n);
    yield* rows;
    if (rows.length === 0 || n >= pagesCount) return;
  }
}

function shlinkItem(
  row: Record<string, unknown>,
  options: ShlinkOptions & { until: string },
  headers: Record<string, string>,
  rules: ReturnType<typeof shlinkRules> | null,
): ImportItem {
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
    item.notImported.push({
      field: 'validSince',
      reason: 'Ferry links are valid from their creation; the start date is dropped',
    });
  }
  if (rules !== null) {
    item.rules = rules.rules;
    item.notImported.push(...rules.notes);
  }
  const path = `/rest/v3/short-urls/${encodeURIComponent(code)}/visits`;
  item.visits = (since) =>
    visitsOf(options, headers, path, { domain: domain ?? undefined, since, until: options.until });
  return item;
}

/** A visit's mark: its date, and its place among the visits of the same second ("2024-06-02T10:00:00.000Z#0"). */
const markOf = (at: number, tie: number): string => `${new Date(at).toISOString()}#${tie}`;
const parseMark = (mark: string): { at: number; tie: number } => {
  const [date, tie] = mark.split('#');
  return { at: Date.parse(date ?? ''), tie: Number(tie ?? 0) };
};

/**
 * A link's visits in the order of their dates, after the mark `since`. Shlink lists visits newest first, so the
 * pages are read from the last to the first (each reversed), over the visits up to `until` (the run's start: no
 * page shifts while they are read) and from the date of `since` on (a re-run asks only for the newer ones).
 */
async function* visitsOf(
  options: ShlinkOptions,
  headers: Record<string, string>,
  path: string,
  window: { domain: string | undefined; since: string | null; until: string },
): AsyncGenerator<ImportVisit> {
  const after = window.since === null ? null : parseMark(window.since);
  const query: Query = {
    domain: window.domain,
    endDate: window.until,
    startDate: after === null ? undefined : new Date(after.at).toISOString(),
  };
  const first = await page(options, headers, path, query, 'visits', 1);
  let last = Number.NaN;
  let tie = 0;
  // A visit whose date cannot be read keeps the mark before it: it is skipped, and the mark never goes back.
  let mark = window.since ?? '';
  for (let n = first.pagesCount; n >= 1; n -= 1) {
    const { rows } = n === 1 ? first : await page(options, headers, path, query, 'visits', n);
    for (const v of [...rows].reverse()) {
      const at = visitDate(stringOrNull(v.date));
      tie = at === last ? tie + 1 : 0;
      last = at;
      if (after !== null && (at < after.at || (at === after.at && tie <= after.tie))) continue;
      if (!Number.isNaN(at)) mark = markOf(at, tie);
      yield shlinkVisit(v, at, mark);
    }
  }
}

function shlinkVisit(v: Record<string, unknown>, at: number, key: string): ImportVisit {
  const location = isObject(v.visitLocation) ? v.visitLocation : {};
  const country = stringOrNull(location.countryCode);
  return {
    key,
    at,
    referrer: stringOrNull(v.referer),
    userAgent: stringOrNull(v.userAgent),
    ip: null,
    country: country !== null && /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
    isBot: typeof v.potentialBot === 'boolean' ? v.potentialBot : null,
  };
}
