import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { linksStatementTriggers, planned, type LinksTrigger } from '../statement-triggers.js';

/**
 * PostgreSQL: the text `q` searches, lower-cased, and the columns a list's total filters by, in a narrow table of
 * their own (issue 37 item 4), where a search that no index narrows is counted.
 *
 * A pattern most links match (`example.com`, in every URL) or a single character is left to the list's order
 * (db/link-search.ts): its page comes at once, but its page-mode total tests every link, and at a million links
 * that was a parallel scan of the whole `links` heap (about 280 MB of rows of 33 columns, most of them never
 * searched), each row tested with up to eight `like`s, four of them on lowered values: over the budget of 200 ms,
 * and over 800 ms for a pattern the planner thought broad that few links hold. Here each link is one row of about
 * half the size, and one `like` (db/link-search-text.ts): the title, the code, the aliases and the URL
 * each lowered as `ilike` lowers them (in its own collation), joined by chr(1), which no needle holds.
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
  await sql`create table link_search_text (
    link_id bigint primary key references links (id) on delete cascade,
    owner_id bigint,
    domain_id bigint not null,
    expires_at bigint,
    text text not null
  )`.execute(db);
  await linksStatementTriggers(db, SEARCH_TEXT_TRIGGER);
  await sql.raw(`insert into link_search_text (${COLUMNS}) select ${rowOf('links')} from links`).execute(db);
  await sql`create index link_search_text_owner_idx on link_search_text (owner_id)`.execute(db);
}

const COLUMNS = 'link_id, owner_id, domain_id, expires_at, text';

/** The row of `link`'s columns, in COLUMNS' order. */
const rowOf = (link: string) =>
  `${link}.id, ${link}.user_id, ${link}.domain_id, ${link}.expires_at, lower(coalesce(${link}.title, '')) || chr(1) ||
  lower(${link}.short_code) || chr(1) || lower(${link}.aliases) || chr(1) || lower(${link}.original_url)`;

/** The columns of `links` that link_search_text is made of. */
const SOURCE = 'id, user_id, domain_id, expires_at, short_code, title, aliases, original_url';

/** The updated links whose searched or filtered columns changed, as they are now: a set difference, hashed. */
const CHANGED = `select ${SOURCE} from new_links except select ${SOURCE} from old_links`;

/**
 * Inserted links get their row; updated ones whose searched or filtered columns changed have it written again.
 * Whether any did is asked first, as a set difference (hashed, one pass over each transition table): planned as
 * one join, the update probed this table's key for every updated link before testing what changed, and an
 * `exists` over the join was planned as a nested loop: a click batch (counters only) over 1,000 links of a
 * million paid 40–80 ms in this trigger, and 121 ms with that `exists`, against 1.1 ms now.
 */
export const SEARCH_TEXT_TRIGGER: LinksTrigger = {
  trigger: 'search_text',
  body: `
declare changed boolean;
begin
  if tg_op = 'INSERT' then
    ${planned(`insert into link_search_text (${COLUMNS}) select ${rowOf('n')} from new_links n order by n.id`)};
  elsif tg_op = 'UPDATE' then
    ${planned(`select exists (${CHANGED})`)} into changed;
    if changed then
      ${planned(`update link_search_text s set (${COLUMNS}) = (select ${rowOf('c')}) from (${CHANGED}) c
        where s.link_id = c.id`)};
    end if;
  end if;
  return null;
end`,
};
