import type { Kysely } from 'kysely';
import type { Database } from '../../../db/types.js';
import type { Paginator, ResolvedList } from '../../../lib/pagination.js';
import { CLICK_RECORD_COLUMNS } from './click-records.columns.js';

export type ClickRecordRow = { id: number; clicked_at: number } & Record<string, unknown>;

export interface ClickRange {
  /** inclusive; null: from the first */
  from: number | null;
  /** exclusive; null: up to the last */
  to: number | null;
}

const SELECTED = [...new Set(['id', 'clicked_at', ...CLICK_RECORD_COLUMNS.map((c) => c.column)])] as Array<
  keyof Database['clicks']
>;

export type ClickRecordsRepository = ReturnType<typeof createClickRecordsRepository>;

/** A link's click records, newest first, in keyset pages (index clicks_link_clicked_idx: link_id, clicked_at). */
export function createClickRecordsRepository(db: Kysely<Database>, paginator: Paginator) {
  return {
    async page(linkId: number, range: ClickRange, list: ResolvedList): Promise<ClickRecordRow[]> {
      let q = db.selectFrom('clicks').select(SELECTED).where('link_id', '=', linkId);
      if (range.from !== null) q = q.where('clicked_at', '>=', range.from);
      if (range.to !== null) q = q.where('clicked_at', '<', range.to);
      return (await paginator.apply(q, list, 'clicks').execute()) as ClickRecordRow[];
    },
  };
}
