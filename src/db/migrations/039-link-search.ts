import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { createPostgresLinkSearch, createSqliteLinkSearch } from '../link-search.js';

/**
 * The link lists at a million links (issue 37 item 4).
 *
 * - `q`'s index (db/link-search.ts): on SQLite an FTS5 trigram table kept by triggers, filled here from the
 *   links there are; on PostgreSQL `pg_trgm` and GIN indexes on title, code, aliases and URL, built here (on a
 *   large instance this takes a while: about a minute a million links, writes to links waiting meanwhile). Without
 *   the privilege to create the extension the migration still succeeds; the start-up warns (link-search.ts).
 * - `links_created_idx` (created_at, id): the admin list (every user's links) in its default order reads one
 *   page of an index instead of sorting every link; the users' lists have theirs (user_id, created_at, id).
 * - `links_user_expires_idx` (user_id, expires_at): a user's list counts its live links (the page mode's total)
 *   from this index alone, instead of reading each of the user's rows for its expiry.
 * - `links_user_code_idx` (user_id, short_code): a user's statistics check which top codes are still theirs
 *   without walking every link of the user.
 * No index on click_count: the click writer changes it on every flush, and each index on it would be rewritten
 * with it; the sort by clicks stays a sort (docs/performance.md).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name === 'sqlite') await createSqliteLinkSearch(db);
  else await createPostgresLinkSearch(db);
  await db.schema.createIndex('links_created_idx').on('links').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('links_user_expires_idx').on('links').columns(['user_id', 'expires_at']).execute();
  await db.schema.createIndex('links_user_code_idx').on('links').columns(['user_id', 'short_code']).execute();
}
