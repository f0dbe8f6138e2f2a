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
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name === 'sqlite') await createSqliteLinkSearch(db);
  else await createPostgresLinkSearch(db);
  await db.schema.createIndex('links_created_idx').on('links').columns(['created_at', 'id']).execute();
}
