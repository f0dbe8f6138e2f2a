import { parseSourceDate, SourceFormatError, type ImportItem, type SourceEntry } from '../import-item.js';
import { cell, csvRows, splitCell, splitShortLink, type CsvInput, type CsvRow } from './csv-rows.js';
import { arrayOfObjects, getSourceJson, isObject, stringOrNull, type SourceLimits } from './source-http.js';

/**
 * Bitly, by its API v4 or its links CSV export. The API (Bitly's published v4 description, dev.bitly.com):
 * GET /v4/groups/{group_guid}/bitlinks with a bearer token answers `{ links: [Bitlink], pagination: { next, … } }`,
 * `next` being the whole URL of the following page ("" on the last); a Bitlink has `link`
 * (`https://bit.ly/abc`), `long_url`, `title`, `created_at`, `tags`, `custom_bitlinks` (the back-halves it also
 * answers on, as whole URLs) and `archived`. The CSV export names the same fields as its columns.
 */
export const BITLY_DEFAULT_DOMAIN = 'bit.ly';

export interface BitlyApiOptions {
  /** the API's base, e.g. https://api-ssl.bitly.com (the group is part of --url: …/v4/groups/{guid}) */
  url: string;
  apiKey: string;
  pageSize?: number;
  limits: SourceLimits;
}

export async function* readBitlyApi(options: BitlyApiOptions): AsyncGenerator<SourceEntry> {
  const headers = { authorization: `Bearer ${options.apiKey}` };
  const first = new URL(`${options.url.replace(/\/+$/, '').replace(/\/bitlinks$/, '')}/bitlinks`);
  if (!/\/v4\/groups\/[^/]+\/bitlinks$/.test(first.pathname)) {
    throw new SourceFormatError('for Bitly, --url names the group: https://api-ssl.bitly.com/v4/groups/<group_guid>');
  }
  first.searchParams.set('size', String(options.pageSize ?? 100));
  for (let next: URL | null = first; next !== null;) {
    const body = await getSourceJson(next, headers, options.limits);
    const rows = arrayOfObjects(body, ['links'], 'Bitly');
    for (const row of rows) {
      try {
        yield* bitlyItems(String(row.link ?? ''), apiFields(row));
      } catch (error) {
        yield { unreadable: true, at: String(row.link ?? '').slice(0, 300), reason: (error as Error).message };
      }
    }
    const pagination = isObject(body) && isObject(body.pagination) ? body.pagination : {};
    const nextText = stringOrNull(pagination.next);
    next = rows.length === 0 || nextText === null ? null : new URL(nextText, first);
  }
}

export async function* readBitlyCsv(input: CsvInput): AsyncGenerator<SourceEntry> {
  for await (const row of csvRows(input)) {
    try {
      for (const item of bitlyItems(cell(row, 'link', 'bitlink', 'Bitlink', 'Short link') ?? '', csvFields(row)))
        yield { ...item, row: `line ${row.line}` };
    } catch (error) {
      yield { unreadable: true, at: `line ${row.line}`, reason: (error as Error).message };
    }
  }
}

interface BitlyFields {
  target: string;
  title: string | null;
  createdAt: string | null;
  tags: string[];
  custom: string[];
  archived: boolean;
}

const apiFields = (row: Record<string, unknown>): BitlyFields => ({
  target: String(row.long_url ?? ''),
  title: stringOrNull(row.title),
  createdAt: stringOrNull(row.created_at),
  tags: Array.isArray(row.tags) ? row.tags.map(String) : [],
  custom: Array.isArray(row.custom_bitlinks) ? row.custom_bitlinks.map(String) : [],
  archived: row.archived === true,
});

/** Where exports and migration guides put the custom back-halves: each column read, a back-half taken once. */
const CUSTOM_COLUMNS = ['custom_bitlinks', 'Custom back-halves', 'Custom back-half', 'Custom Link'];

function csvFields(row: CsvRow): BitlyFields {
  return {
    target: (cell(row, 'long_url', 'Long URL', 'Destination URL') ?? '').trim(),
    title: (cell(row, 'title', 'Title') ?? '').trim() || null,
    createdAt: (cell(row, 'created_at', 'Created', 'Date created', 'created') ?? '').trim() || null,
    tags: splitCell(cell(row, 'tags', 'Tags'), /[|,]/),
    custom: [...new Set(CUSTOM_COLUMNS.flatMap((name) => splitCell(cell(row, name), /[|,\s]+/)))],
    archived: /^(true|yes)$/i.test((cell(row, 'archived', 'Archived') ?? '').trim()),
  };
}

/**
 * A Bitlink and its custom back-halves: those on the Bitlink's own domain are its aliases; one on another
 * (branded) domain is a link of that domain with the same target, since each printed link must keep working
 * where it was printed.
 */
function* bitlyItems(link: string, f: BitlyFields): Generator<ImportItem> {
  const short = splitShortLink(link);
  if (short === null) throw new SourceFormatError(`not a Bitlink: ${JSON.stringify(link)}`);
  const custom = f.custom.map((c) => splitShortLink(c)).filter((c) => c !== null);
  const base = (domain: string, code: string, aliases: string[]): ImportItem => ({
    domain,
    code,
    target: f.target,
    createdAt: parseSourceDate(f.createdAt),
    expiresAt: null,
    tags: f.tags,
    title: f.title,
    maxVisits: null,
    forwardQuery: false,
    aliases,
    visitCount: null,
    visits: null,
    notImported: f.archived ? [{ field: 'archived', reason: 'archived in Bitly; imported as an ordinary link' }] : [],
  });
  yield base(
    short.domain,
    short.code,
    custom.filter((c) => c.domain === short.domain).map((c) => c.code),
  );
  for (const other of custom.filter((c) => c.domain !== short.domain)) yield base(other.domain, other.code, []);
}
