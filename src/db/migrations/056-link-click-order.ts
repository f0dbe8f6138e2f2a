import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { linksStatementTriggers, planned, type LinksTrigger } from '../statement-triggers.js';

/**
 * PostgreSQL: the lists sorted by clicks read `link_click_order` instead of indexes on `links` (issue 37 item 3).
 *
 * With `click_count` in two indexes of `links` (migration 050), PostgreSQL could not update a clicked link's row
 * in place (a HOT update): every counter update added an entry to each of the table's 19 indexes, four of them
 * GIN trigram indexes, and was the largest part of a scale-out worker's batch (docs/performance.md). The order
 * now lives in a narrow table — a link, its owner, its count, and the two indexes the lists walk — kept by a
 * statement trigger over each write's transition tables in the writing transaction, so it is never behind
 * `links` (its columns named apart from those of `links`, so that a query joining the two stays unambiguous); the
 * counters on `links` are no longer indexed, and its pages keep room for in-place updates
 * (`fillfactor = 90`). A deleted link's row goes with it (the foreign key's cascade).
 *
 * SQLite: nothing. It rewrites only the indexes whose columns change, so the indexes on `links` cost it one entry
 * each per clicked link, and the lists keep reading them.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name !== 'postgres') return;
  await sql`create table link_click_order (
    link_id bigint primary key references links (id) on delete cascade,
    owner_id bigint,
    clicks bigint not null
  )`.execute(db);
  await linksStatementTriggers(db, CLICK_ORDER_TRIGGER);
  await sql`insert into link_click_order (link_id, owner_id, clicks) select id, user_id, click_count from links`.execute(
    db,
  );
  await sql`create index link_click_order_clicks_idx on link_click_order (clicks, link_id)`.execute(db);
  await sql`create index link_click_order_user_idx on link_click_order (owner_id, clicks, link_id)`.execute(db);
  await sql`drop index links_clicks_idx`.execute(db);
  await sql`drop index links_user_clicks_idx`.execute(db);
  await sql`alter table links set (fillfactor = 90)`.execute(db);
}

/**
 * Inserted links get their row; updated ones whose count or owner changed have it updated (two writers of the
 * same links have already waited for each other on those links' rows). Deletes: the foreign key's cascade.
 */
export const CLICK_ORDER_TRIGGER: LinksTrigger = {
  trigger: 'click_order',
  body: `
begin
  if tg_op = 'INSERT' then
    ${planned(`insert into link_click_order (link_id, owner_id, clicks)
      select id, user_id, click_count from new_links order by id`)};
  elsif tg_op = 'UPDATE' then
    ${planned(`update link_click_order o set clicks = n.click_count, owner_id = n.user_id
      from (select n.id, n.user_id, n.click_count from new_links n join old_links p on p.id = n.id
        where n.click_count <> p.click_count or n.user_id is distinct from p.user_id) n
      where o.link_id = n.id`)};
  end if;
  return null;
end`,
};
