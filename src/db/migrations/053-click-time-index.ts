import type { Kysely } from 'kysely';

/**
 * `clicks_clicked_idx` (clicked_at, id): the click retention job (modules/clicks/click-retention.ts) deletes the
 * old records in the order they were written, so that a statement's records share pages. Walking them a link at a
 * time through `clicks_link_clicked_idx` spread every statement over as many pages as records (a link's records
 * lie among every other link's): 1,000,000 deletions ran at 16,200 a second, oldest first at 23,700
 * (bench/click-retention.ts). The records are written in time order, so the new index is appended at
 * its end: one leaf page per flush. On PostgreSQL it is made on every monthly partition of `clicks`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('clicks_clicked_idx').on('clicks').columns(['clicked_at', 'id']).execute();
}
