import { parseSourceDate, SourceFormatError, type ImportItem, type SourceEntry } from '../import-item.js';
import { cell, csvRows, splitCell, type CsvInput, type CsvRow } from './csv-rows.js';

/**
 * Ferry's generic CSV (docs/migrating.md): a header row naming `url` (required), `code`, `domain`, `created_at`,
 * `expires_at`, `tags`, `title`, `max_visits`, `forward_query`, `aliases`, in any order; several tags or aliases in
 * one cell are separated by `|`. It is also what `GET /api/v1/users/{id}/links` writes for `Accept: text/csv`, so
 * an export from one Ferry imports into another unchanged.
 */
export const GENERIC_CSV_COLUMNS = [
  'url', 'code', 'domain', 'created_at', 'expires_at', 'tags', 'title', 'max_visits', 'forward_query', 'aliases',
] as const;

export async function* readGenericCsv(input: CsvInput): AsyncGenerator<SourceEntry> {
  for await (const row of csvRows(input)) {
    try {
      yield genericItem(row);
    } catch (error) {
      yield { unreadable: true, at: `line ${row.line}`, reason: (error as Error).message };
    }
  }
}

function genericItem(row: CsvRow): ImportItem {
  const target = (cell(row, 'url') ?? '').trim();
  if (target === '') throw new SourceFormatError('the url cell is empty');
  const maxVisits = (cell(row, 'max_visits') ?? '').trim();
  if (maxVisits !== '' && !/^\d+$/.test(maxVisits)) throw new SourceFormatError(`max_visits is not a whole number: ${maxVisits}`);
  const domain = (cell(row, 'domain') ?? '').trim().toLowerCase();
  return {
    domain: domain === '' ? null : domain,
    code: (cell(row, 'code') ?? '').trim(),
    target,
    createdAt: parseSourceDate(cell(row, 'created_at')),
    expiresAt: parseSourceDate(cell(row, 'expires_at')),
    tags: splitCell(cell(row, 'tags')),
    title: (cell(row, 'title') ?? '') === '' ? null : cell(row, 'title')!,
    maxVisits: maxVisits === '' ? null : Number(maxVisits),
    forwardQuery: /^(true|1|yes)$/i.test((cell(row, 'forward_query') ?? '').trim()),
    aliases: splitCell(cell(row, 'aliases')),
    visitCount: null,
    visits: null,
    notImported: [],
  };
}
