import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { createSqliteLinkSearch } from '../link-search.js';

/**
 * SQLite: the search index (migration 039) built anew with each column's text followed by char(1), and its list
 * of trigrams (`link_search_terms`), so that a `q` of two characters is looked up instead of read from every link
 * (db/link-search.ts, shortCandidates). On a large instance this takes a while: about 15 s a million links,
 * writes waiting meanwhile. PostgreSQL: nothing (`pg_trgm` does not serve two characters).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name === 'sqlite') await createSqliteLinkSearch(db);
}
