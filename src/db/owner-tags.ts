import { sql, type Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import { linksStatementTriggers, planned, type LinksTrigger } from './statement-triggers.js';

/**
 * `link_owner_tags` (migration 050): per owner, tag and domain, how many links carry the tag, so that a user's
 * list filtered by a tag counts its total (page mode) from a row instead of from every tagged link (500,000
 * links of a common tag: 150 ms and more). Kept by the database from `links.tags` (the comma-separated copy of
 * the link's tags that every write of `link_tags` writes in the same statement's transaction), on every insert,
 * delete and change of a link's tags, owner or domain, in the writing transaction: row triggers on SQLite (the
 * click writers change none of these columns, so they never fire them), statement triggers on PostgreSQL
 * (below). Links without an owner have no rows. Rows that fall to zero stay (a user's tags are few).
 *
 * A migration that rebuilds `links` on SQLite drops the triggers with the old table: it must call
 * createOwnerTags again.
 */
export async function createOwnerTags(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await sql`create table if not exists link_owner_tags (
    user_id ${sql.raw(d.bigint)} not null,
    tag varchar(32) not null,
    domain_id ${sql.raw(d.bigint)} not null,
    links ${sql.raw(d.bigint)} not null default 0,
    primary key (user_id, tag, domain_id)
  )${sql.raw(d.name === 'sqlite' ? ' without rowid' : '')}`.execute(db);
  if (d.name === 'sqlite') await sqliteTriggers(db);
  else await linksStatementTriggers(db, OWNER_TAGS_TRIGGER);
  await sql`delete from link_owner_tags`.execute(db);
  await sql`insert into link_owner_tags (user_id, tag, domain_id, links)
    select l.user_id, t.tag, l.domain_id, count(*) from link_tags t join links l on l.id = t.link_id
    where l.user_id is not null group by l.user_id, t.tag, l.domain_id`.execute(db);
}

/** A link's tags as rows `value` (tags are `a-z 0-9 -`: the list is a JSON array once quoted). */
const sqliteTagsOf = (row: 'old' | 'new') => `json_each('["' || replace(${row}.tags, ',', '","') || '"]')`;

const sqliteAdd = `insert into link_owner_tags (user_id, tag, domain_id, links)
    select distinct new.user_id, value, new.domain_id, 1 from ${sqliteTagsOf('new')} where new.user_id is not null and new.tags <> ''
    on conflict (user_id, tag, domain_id) do update set links = links + 1`;
const sqliteSubtract = `update link_owner_tags set links = links - 1
    where user_id = old.user_id and domain_id = old.domain_id and old.tags <> '' and tag in (select value from ${sqliteTagsOf('old')})`;

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const name of ['insert', 'delete', 'update'])
    await sql`drop trigger if exists ${sql.raw(`links_owner_tags_${name}`)}`.execute(db);
  await sql`create trigger links_owner_tags_insert after insert on links when new.user_id is not null and new.tags <> ''
    begin ${sql.raw(sqliteAdd)}; end`.execute(db);
  await sql`create trigger links_owner_tags_delete after delete on links when old.user_id is not null and old.tags <> ''
    begin ${sql.raw(sqliteSubtract)}; end`.execute(db);
  await sql`create trigger links_owner_tags_update after update of tags, user_id, domain_id on links
    when old.tags is not new.tags or old.user_id is not new.user_id or old.domain_id <> new.domain_id
    begin ${sql.raw(sqliteSubtract)}; ${sql.raw(sqliteAdd)}; end`.execute(db);
}

/** A statement's links (`rows`, a transition table) with the sign `n`, one row per tag. */
const tagRows = (rows: string, n: 1 | -1, where = 'true') =>
  `select r.user_id, t.tag, r.domain_id, ${n} as n from ${rows} r cross join unnest(string_to_array(r.tags, ',')) as t(tag)
    where r.user_id is not null and r.tags <> '' and ${where}`;

/** The links of an update whose tags, owner or domain changed (of a click batch: none, and nothing is unnested). */
const CHANGED = `r.id in (select o.id from old_links o join new_links n on n.id = o.id
  where o.tags is distinct from n.tags or o.user_id is distinct from n.user_id or o.domain_id <> n.domain_id)`;

const applyTags = (changes: string) => `insert into link_owner_tags as t (user_id, tag, domain_id, links)
  select user_id, tag, domain_id, sum(n) from (${changes}) c group by user_id, tag, domain_id having sum(n) <> 0
  order by user_id, tag, domain_id
  on conflict (user_id, tag, domain_id) do update set links = t.links + excluded.links`;

/**
 * PostgreSQL: statement triggers over the transition tables, as db/owner-totals.ts's (a row trigger would
 * update one owner's row once per link: an import's batch, or a million links inserted at once, then made
 * that row's versions a chain each update walks, quadratic in the links of one transaction); each statement
 * planned for the tables it is given (statement-triggers.ts).
 */
export const OWNER_TAGS_TRIGGER: LinksTrigger = {
  trigger: 'owner_tags',
  body: `
begin
  if tg_op = 'INSERT' then ${planned(applyTags(tagRows('new_links', 1)))};
  elsif tg_op = 'DELETE' then ${planned(applyTags(tagRows('old_links', -1)))};
  else ${planned(applyTags(`${tagRows('new_links', 1, CHANGED)} union all ${tagRows('old_links', -1, CHANGED)}`))};
  end if;
  return null;
end`,
};
