import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { createOwnerTags } from '../owner-tags.js';
import { createOwnerTotals } from '../owner-totals.js';

/**
 * A million links of one user answering like a handful (issue 37 item 4):
 *
 * - `link_owner_totals`: per owner and domain, the number of links and the sums of their counters, kept by the
 *   database itself on every write to `links` (db/owner-totals.ts), so that a user's statistics read a row per
 *   domain instead of summing every link (2.5 s at a million links).
 * - `link_owner_tags`: per owner, tag and domain, the number of links with the tag (db/owner-tags.ts), so that
 *   a list filtered by a tag counts its total from a row.
 * - `links_user_clicks_idx` (user_id, click_count, id) and `links_clicks_idx` (click_count, id): the lists sorted
 *   by clicks, a user's and the admin's, read one page of an index instead of sorting every link. The click
 *   writer rewrites these entries with the counter: on SQLite one more index entry per clicked link and flush.
 *   On PostgreSQL an indexed counter made every counter update rewrite all the indexes of `links` (no HOT
 *   update): migration 056 moves the two to a table of their own.
 * - `links_user_expiry_order_idx` and `links_expiry_order_idx`: the order by expiry as the lists sort it, a link
 *   that never expires last (`coalesce(expires_at, 2^53 - 1)`, lib/pagination.ts writes the same literal).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await createOwnerTotals(db, d);
  await createOwnerTags(db, d);
  await db.schema.createIndex('links_user_clicks_idx').on('links').columns(['user_id', 'click_count', 'id']).execute();
  await db.schema.createIndex('links_clicks_idx').on('links').columns(['click_count', 'id']).execute();
  await sql`create index links_user_expiry_order_idx on links (user_id, (coalesce(expires_at, 9007199254740991)), id)`.execute(
    db,
  );
  await sql`create index links_expiry_order_idx on links ((coalesce(expires_at, 9007199254740991)), id)`.execute(db);
}
