import { parseSourceDate, SourceFormatError, type ImportItem, type SourceEntry } from '../import-item.js';
import { cell, csvRows, splitCell, splitShortLink, type CsvInput, type CsvRow } from './csv-rows.js';

/**
 * Dub's links CSV export. Its columns are the labels of `exportLinksColumns` (apps/web/lib/zod/schemas/links.ts in
 * dubinc/dub): "Short link" (`https://<domain>/<key>`), "Destination URL", "Clicks", "Created at" (ISO 8601), and
 * when chosen "Link ID", "Updated at", "Tags" (joined by ", "), "Archived", "Leads", "Conversions", "Revenue".
 * Dub's export has no visit rows: Clicks becomes the link's click_count.
 */
export async function* readDubCsv(input: CsvInput): AsyncGenerator<SourceEntry> {
  for await (const row of csvRows(input)) {
    try {
      yield { ...dubItem(row), row: `line ${row.line}` };
    } catch (error) {
      yield { unreadable: true, at: `line ${row.line}`, reason: (error as Error).message };
    }
  }
}

function dubItem(row: CsvRow): ImportItem {
  const short = splitShortLink(cell(row, 'Short link', 'link') ?? '');
  if (short === null) throw new SourceFormatError('the Short link cell is not a short link');
  const clicks = Number((cell(row, 'Clicks', 'clicks') ?? '0').trim() || '0');
  const item: ImportItem = {
    domain: short.domain,
    code: short.code,
    target: (cell(row, 'Destination URL', 'url') ?? '').trim(),
    createdAt: parseSourceDate(cell(row, 'Created at', 'createdAt')),
    expiresAt: null,
    tags: splitCell(cell(row, 'Tags', 'tags'), ','),
    title: null,
    maxVisits: null,
    forwardQuery: false,
    aliases: [],
    visitCount: Number.isFinite(clicks) && clicks >= 0 ? Math.floor(clicks) : 0,
    visits: null,
    notImported: [],
  };
  if (/^(yes|true)$/i.test((cell(row, 'Archived', 'archived') ?? '').trim())) {
    item.notImported.push({ field: 'archived', reason: 'archived in Dub; imported as an ordinary link' });
  }
  return item;
}
