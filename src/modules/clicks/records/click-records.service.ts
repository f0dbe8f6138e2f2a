import type { Readable } from 'node:stream';
import type { LinkRow } from '../../../db/types.js';
import { validationError, type ErrorDetail } from '../../../lib/app-error.js';
import { INSTANT_RULE, parseInstant } from '../../../lib/instant.js';
import type { Caller } from '../../../lib/caller.js';
import type { PageResult, Paginator, ResolvedList } from '../../../lib/pagination.js';
import { csvStream, keysetChunks, type CsvCell } from '../../../lib/csv-export.js';
import { CLICK_RECORD_COLUMNS } from './click-records.columns.js';
import type { ClickRange, ClickRecordRow, ClickRecordsRepository } from './click-records.repository.js';
import type { ClickRecordQueryT } from './click-records.schemas.js';

/** Rows per query of a CSV export: what the export holds in memory at once, whatever the range. */
export const EXPORT_CHUNK = 1000;

const SORT = { clicked_at: 'clicked_at' } as const;

export type ClickRecord = Record<string, string | number | boolean | null>;

const toRecord = (row: ClickRecordRow): ClickRecord =>
  Object.fromEntries(CLICK_RECORD_COLUMNS.map((c) => [c.column, c.value(row)]));

function rangeOf(query: Pick<ClickRecordQueryT, 'from' | 'to'>): ClickRange {
  const details: ErrorDetail[] = [];
  const at = (name: 'from' | 'to'): number | null => {
    const raw = query[name];
    if (raw === undefined) return null;
    const ms = parseInstant(raw);
    if (ms === null) details.push({ field: name, message: INSTANT_RULE });
    return ms;
  };
  const range = { from: at('from'), to: at('to') };
  if (!details.length && range.from !== null && range.to !== null && range.from >= range.to)
    details.push({ field: 'from', message: 'must be before to' });
  if (details.length) throw validationError(details, 'Query parameters are invalid');
  return range;
}

export type ClickRecordsService = ReturnType<typeof createClickRecordsService>;

/** What the click records need of links (clicks/link-access.ts: the links service implements it). */
export interface RecordLinks {
  /** the link for its click records: its owner or an admin */
  getForOwner(code: string, caller: Caller | null, domain?: string): Promise<LinkRow>;
}

/**
 * A link's click records (SPEC §13), for its owner or an admin (an anonymous link's: an admin's; they hold
 * client addresses). JSON pages by cursor, newest first; CSV streams the whole range in keyset chunks of
 * EXPORT_CHUNK rows, each read when the client has taken the previous one (lib/csv-export.ts),
 * so an export's memory does not grow with its size.
 */
export function createClickRecordsService(deps: {
  records: ClickRecordsRepository;
  links: RecordLinks;
  paginator: Paginator;
}) {
  const { records, links, paginator } = deps;

  const listOf = (
    linkId: number,
    range: ClickRange,
    query: Pick<ClickRecordQueryT, 'limit' | 'cursor'>,
  ): ResolvedList =>
    paginator.resolve({ ...query, sort: 'clicked_at', order: 'desc' }, SORT, { link: linkId, ...range }, true);

  async function* csvRows(linkId: number, range: ClickRange): AsyncGenerator<CsvCell[][]> {
    const chunks = keysetChunks(
      listOf(linkId, range, {}),
      EXPORT_CHUNK,
      (list) => records.page(linkId, range, list),
      (row) => Number(row.clicked_at),
    );
    for await (const chunk of chunks) yield chunk.map((row) => CLICK_RECORD_COLUMNS.map((c) => c.value(row)));
  }

  return {
    async page(
      code: string,
      query: ClickRecordQueryT,
      caller: Caller | null,
      requestUrl: string,
    ): Promise<PageResult<ClickRecord>> {
      const range = rangeOf(query);
      const link = await links.getForOwner(code, caller, query.domain);
      const list = listOf(link.id, range, query);
      const rows = await records.page(link.id, range, list);
      return paginator.page(rows, list, null, requestUrl, toRecord, (r) => Number(r.clicked_at));
    },

    /** The CSV export; `header` names the columns as the API version does. Checks access before it starts. */
    async csv(code: string, query: ClickRecordQueryT, caller: Caller | null, header: string[]): Promise<Readable> {
      const range = rangeOf(query);
      const link = await links.getForOwner(code, caller, query.domain);
      return csvStream(header, csvRows(link.id, range), 'neutralise');
    },
  };
}
