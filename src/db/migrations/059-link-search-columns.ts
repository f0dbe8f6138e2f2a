import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { linksStatementTriggers } from '../statement-triggers.js';

/**
 * PostgreSQL: the columns `q` searches, and those a list's total filters by, in a narrow table of their own
 * (issue 37 item 4), where a search that no index narrows is counted.
 *
 * A pattern most links match (`example.com`, in every URL) or a single character is left to the list's order
 * (db/link-search.ts): its page comes at once, but its page-mode total tests every link, and at a million links
 * that was a parallel scan of the whole `links` heap, about 280 MB of rows of 33 columns, most of which is not
 * searched: two to three times the budget of 200 ms. The same test over these seven columns reads about half as
 * many pages (docs/performance.md, "A million links"). The columns keep their types and collations (the code's
 * "C"), so the count tests them with the very condition the list's rows are tested with, and answers the same.
 *
 * Kept by a statement trigger over each write's transition tables, in the writing transaction (as
 * link_click_order, migration 056), so a total is never behind `links`; an update that changes none of its
 * columns (the click writers' counters) changes nothing here. A deleted link's row goes with it (the foreign key's
 * cascade). Indexed by owner, for a user's total among many users' links.
 *
 * SQLite: nothing. Its search index (migrations 039, 055) is narrow already, and a count no index narrows is cut
 * into parts read side by side on the scan threads (db/sqlite-scans.ts).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name !== 'postgres') return;
  await sql`create table link_search_columns (
    link_id bigint primary key references links (id) on delete cascade,
    owner_id bigint,
    domain_id bigint not null,
    expires_at bigint,
    short_code text collate "C" not null,
    title text,
    aliases text not null,
    original_url text not null
  )`.execute(db);
  await linksStatementTriggers(db, 'search_columns', { sql: POSTGRES_FUNCTION, name: 'link_search_columns_apply' });
  await sql.raw(`insert into link_search_columns (${COLUMNS}) select ${FROM_LINKS} from links`).execute(db);
  await sql`create index link_search_columns_owner_idx on link_search_columns (owner_id)`.execute(db);
}

const COLUMNS = 'link_id, owner_id, domain_id, expires_at, short_code, title, aliases, original_url';
/** The same of `links`, in the same order. */
const FROM_LINKS = 'id, user_id, domain_id, expires_at, short_code, title, aliases, original_url';

/** Inserted links get their row; updated ones whose searched or filtered columns changed have it rewritten. */
const POSTGRES_FUNCTION = `create or replace function link_search_columns_apply() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into link_search_columns (${COLUMNS})
      select ${FROM_LINKS} from new_links order by id;
  elsif tg_op = 'UPDATE' then
    update link_search_columns s set owner_id = n.user_id, domain_id = n.domain_id, expires_at = n.expires_at,
        short_code = n.short_code, title = n.title, aliases = n.aliases, original_url = n.original_url
      from (select n.* from new_links n join old_links p on p.id = n.id
        where (n.user_id, n.domain_id, n.expires_at, n.short_code, n.title, n.aliases, n.original_url)
          is distinct from (p.user_id, p.domain_id, p.expires_at, p.short_code, p.title, p.aliases, p.original_url)) n
      where s.link_id = n.id;
  end if;
  return null;
end $$`;
