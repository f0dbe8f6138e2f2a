import { unescapeCsvFormula } from '../../../lib/csv-export.js';
import { LINK_CSV_COLUMNS } from '../../links/index.js';
import { parseSourceDate, SourceFormatError, type ImportItem, type SourceEntry } from '../import-item.js';
import { cell, csvRows, splitCell, type CsvInput, type CsvRow } from './csv-rows.js';

/**
 * Ferry's generic CSV (docs/migrating.md): a header row naming `url` (required), `code`, `domain`, `created_at`,
 * `expires_at`, `tags`, `title`, `max_visits`, `forward_query`, `aliases`, in any order; several tags or aliases in
 * one cell are separated by `|`. It is also what `GET /api/v1/users/{id}/links` writes for `Accept: text/csv`, so
 * an export from one Ferry imports into another unchanged (a cell the export escaped against spreadsheet
 * formulas, `'-50%`, reads back as it was: lib/csv-export.ts).
 */
export const GENERIC_CSV_COLUMNS = LINK_CSV_COLUMNS;

export async function* readGenericCsv(input: CsvInput): AsyncGenerator<SourceEntry> {
  for await (const row of csvRows(input)) {
    try {
      yield { ...genericItem(row), row: `line ${row.line}` };
    } catch (error) {
      yield { unreadable: true, at: `line ${row.line}`, reason: (error as Error).message };
    }
  }
}

function genericItem(row: CsvRow): ImportItem {
  const text = (name: (typeof GENERIC_CSV_COLUMNS)[number]): string => unescapeCsvFormula(cell(row, name) ?? '');
  const target = text('url').trim();
  if (target === '') throw new SourceFormatError('the url cell is empty');
  const maxVisits = text('max_visits').trim();
  if (maxVisits !== '' && !/^\d+$/.test(maxVisits))
    throw new SourceFormatError(`max_visits is not a whole number: ${maxVisits}`);
  const domain = text('domain').trim().toLowerCase();
  const title = text('title');
  return {
    domain: domain === '' ? null : domain,
    code: text('code').trim(),
    target,
    createdAt: parseSourceDate(text('created_at')),
    expiresAt: parseSourceDate(text('expires_at')),
    tags: splitCell(text('tags')),
    title: title === '' ? null : title,
    maxVisits: maxVisits === '' ? null : Number(maxVisits),
    forwardQuery: /^(true|1|yes)$/i.test(text('forward_query').trim()),
    aliases: splitCell(text('aliases')),
    visitCount: null,
    visits: null,
    notImported: [],
  };
}
