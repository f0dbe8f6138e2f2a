import { Readable } from 'node:stream';
import type { LinkRow } from '../../../db/types.js';
import { validationError, type ErrorDetail } from '../../../lib/app-error.js';
import { INSTANT_RULE, parseInstant } from '../../../lib/instant.js';
import type { Caller } from '../../../lib/caller.js';
import type { PageResult, Paginator, ResolvedList } from '../../../lib/pagination.js';
import { CLICK_RECORD_COLUMNS } from './click-records.columns.js';
import { csvLine } from './click-records.csv.js';
import type { ClickRange, ClickRecordRow, ClickRecordsRepository } from './click-records.repository.js';
import type { ClickRecordQueryT } from './click-records.schemas.js';

/** Rows per query of a CSV export: what the export holds in memory at once, whatever the range. */
export const EXPORT_CHUNK = 1000;

const SORT = { clicked_at: 'clicked_at' } as const;

export type ClickRecord = Record<string, string | number | boolean | null>;

const toRecord = (row: ClickRecordRow): ClickRecord => Object.fromEntries(CLICK_RECORD_COLUMNS.map((c) => [c.column, c.value(row)]));

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
  if (!details.length && range.from !== null && range.to !== null && range.from >= range.to) details.push({ field: 'from', message: 'must be before to' });
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
 * EXPORT_CHUNK rows, each read when the client has taken the previous one (Readable.from pulls on demand),
 * so an export's memory does not grow with its size.
 */
export function createClickRecordsService(deps: { records: ClickRecordsRepository; links: RecordLinks; paginator: Paginator }) {
  const { records, links, paginator } = deps;

  const listOf = (linkId: number, range: ClickRange, query: Pick<ClickRecordQueryT, 'limit' | 'cursor'>): ResolvedList =>
    paginator.resolve({ ...query, sort: 'clicked_at', order: 'desc' }, SORT, { link: linkId, ...range }, true);

  async function* csvRows(linkId: number, range: ClickRange, header: string[]): AsyncGenerator<string> {
    yield csvLine(header);
    let list: ResolvedList = { ...listOf(linkId, range, {}), limit: EXPORT_CHUNK };
    for (;;) {
      const rows = await records.page(linkId, range, list);
      const chunk = rows.slice(0, EXPORT_CHUNK);
      if (chunk.length) yield chunk.map((row) => csvLine(CLICK_RECORD_COLUMNS.map((c) => c.value(row)))).join('');
      if (rows.length <= EXPORT_CHUNK) return;
      const last = chunk[chunk.length - 1]!;
      list = { ...list, after: { value: Number(last.clicked_at), id: Number(last.id) } };
    }
  }

  return {
    async page(code: string, query: ClickRecordQueryT, caller: Caller | null, requestUrl: string): Promise<PageResult<ClickRecord>> {
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
      return Readable.from(csvRows(link.id, range, header), { objectMode: false });
    },
  };
}
