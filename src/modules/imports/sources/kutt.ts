import { parseSourceDate, readItem, type ImportItem, type SourceEntry } from '../import-item.js';
import { apiUrl, arrayOfObjects, getSourceJson, isObject, stringOrNull, type SourceLimits } from './source-http.js';

/**
 * Kutt's API v2 (its OpenAPI description: docs/api/api.js in thedevs-network/kutt): GET /api/v2/links with
 * `limit` (Kutt caps it at 50) and `skip`, answering `{ limit, skip, total, data: [Link] }`, with the `X-API-KEY`
 * header. A Link has `address`, `target`, `domain` (null on the default domain), `description`, `expire_in`,
 * `created_at`, `password` (a boolean: the hash never leaves Kutt) and `visit_count`; Kutt keeps no visit rows
 * that its API gives out, so the count becomes the link's click_count.
 */
export interface KuttOptions {
  url: string;
  apiKey: string;
  pageSize?: number;
  limits: SourceLimits;
}

const KUTT_PAGE_LIMIT = 50;

export async function* readKutt(options: KuttOptions): AsyncGenerator<SourceEntry> {
  const limit = Math.min(options.pageSize ?? KUTT_PAGE_LIMIT, KUTT_PAGE_LIMIT);
  const headers = { 'X-API-KEY': options.apiKey };
  for (let skip = 0; ;) {
    const body = await getSourceJson(apiUrl(options.url, '/api/v2/links', { limit, skip }), headers, options.limits);
    const rows = arrayOfObjects(body, ['data'], 'Kutt');
    for (const row of rows)
      yield readItem(`${stringOrNull(row.domain) ?? ''}/${String(row.address ?? '')}`, () => kuttItem(row));
    skip += rows.length;
    const total = isObject(body) && typeof body.total === 'number' ? body.total : skip;
    if (rows.length === 0 || skip >= total) return;
  }
}

function kuttItem(row: Record<string, unknown>): ImportItem {
  const item: ImportItem = {
    domain: stringOrNull(row.domain),
    code: String(row.address ?? ''),
    target: String(row.target ?? ''),
    createdAt: parseSourceDate(stringOrNull(row.created_at)),
    expiresAt: parseSourceDate(stringOrNull(row.expire_in)),
    tags: [],
    title: stringOrNull(row.description),
    maxVisits: null,
    forwardQuery: false,
    aliases: [],
    visitCount: typeof row.visit_count === 'number' ? row.visit_count : Number(row.visit_count ?? 0) || 0,
    visits: null,
    notImported: [],
  };
  if (row.password === true) {
    item.notImported.push({
      field: 'password',
      reason: "Kutt's password hash cannot be read by Ferry; the link is imported without a password",
    });
  }
  if (row.banned === true) {
    item.notImported.push({
      field: 'banned',
      reason: 'banned in Kutt; imported as an ordinary link (an admin may disable it)',
    });
  }
  return item;
}
