import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { createPostgresLinkPairs } from '../link-search.js';

/**
 * PostgreSQL: a `q` of two characters is looked up instead of read from every link (issue 37 item 4). `pg_trgm`
 * extracts no trigram from two characters, so until now such a search was a scan of every link with four
 * `ilike`s (a second and more at a million links). This adds `link_search_pairs`, a function giving the pairs of
 * adjacent characters of a text, lower-cased as `ilike` lowers it, and a GIN index of the pairs of each link's
 * searched text (db/link-search.ts). It needs no extension. On a large instance it takes a while: about 45 s a
 * million links on a 2-core VM, writes to `links` waiting meanwhile. SQLite: nothing (migration 055 serves two
 * characters from its trigram index).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name === 'postgres') await createPostgresLinkPairs(db);
}
