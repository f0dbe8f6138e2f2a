import { sql, type Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import { linksStatementTriggers, planned, type LinksTrigger } from './statement-triggers.js';

/**
 * `link_owner_totals` (migration 050): per owner and domain of links, how many links there are and the sums of
 * their counters (clicks, bots, unique visitors), with the earliest first click and the latest last click. A
 * user's statistics read these rows (a handful per user) instead of summing every link of theirs.
 *
 * The database keeps them, on every write to `links` whatever its path (the API, imports, bulk, the expiry
 * sweep, the click writers, a user's deletion setting their links' owner to null), in the writing transaction:
 * - SQLite: row triggers. The click writer's update of a link adds its change to one totals row.
 * - PostgreSQL: statement triggers over the statement's transition tables, so a click writer's batch (one
 *   `update links … from (values …)`) adds to each owner's row once per statement, not once per link: one row
 *   version and one row lock per owner and batch, taken in key order.
 * Links without an owner (anonymous) have no row. The counts are exact (added and subtracted with the links'
 * own); first_click_at and last_click_at only ever move outwards, so they keep the clicks of links deleted
 * since, as the user's click totals do (users.deleted_link_clicks).
 *
 * A migration that rebuilds `links` (copy, drop, rename) on SQLite drops the triggers with the old table: it
 * must call createOwnerTotals again (it refills the rows from the links there are).
 */
export async function createOwnerTotals(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await sql`create table if not exists link_owner_totals (
    user_id ${sql.raw(d.bigint)} not null,
    domain_id ${sql.raw(d.bigint)} not null,
    links ${sql.raw(d.bigint)} not null default 0,
    clicks ${sql.raw(d.bigint)} not null default 0,
    bots ${sql.raw(d.bigint)} not null default 0,
    unique_visitors ${sql.raw(d.bigint)} not null default 0,
    first_click_at ${sql.raw(d.bigint)},
    last_click_at ${sql.raw(d.bigint)},
    primary key (user_id, domain_id)
  )${sql.raw(d.name === 'sqlite' ? ' without rowid' : '')}`.execute(db);
  if (d.name === 'sqlite') await sqliteTriggers(db);
  else await linksStatementTriggers(db, OWNER_TOTALS_TRIGGER);
  await sql`delete from link_owner_totals`.execute(db);
  await sql`insert into link_owner_totals (user_id, domain_id, links, clicks, bots, unique_visitors, first_click_at, last_click_at)
    select user_id, domain_id, count(*), sum(click_count), sum(bot_clicks), sum(unique_visitors), min(first_click_at),
      max(last_click_at)
    from links where user_id is not null group by user_id, domain_id`.execute(db);
}

/** The earlier (or later) of two instants either of which may be null (SQLite's min() of a null is null). */
const sqliteEdge = (fn: 'min' | 'max', a: string, b: string) => `${fn}(coalesce(${a}, ${b}), coalesce(${b}, ${a}))`;

/** Adds `row`'s link (+1, its counters, its click times) to its owner's row. */
const sqliteAdd = (row: 'new') => `insert into link_owner_totals
    (user_id, domain_id, links, clicks, bots, unique_visitors, first_click_at, last_click_at)
    select ${row}.user_id, ${row}.domain_id, 1, ${row}.click_count, ${row}.bot_clicks, ${row}.unique_visitors,
      ${row}.first_click_at, ${row}.last_click_at
    where ${row}.user_id is not null
    on conflict (user_id, domain_id) do update set links = links + 1, clicks = clicks + excluded.clicks,
      bots = bots + excluded.bots, unique_visitors = unique_visitors + excluded.unique_visitors,
      first_click_at = ${sqliteEdge('min', 'first_click_at', 'excluded.first_click_at')},
      last_click_at = ${sqliteEdge('max', 'last_click_at', 'excluded.last_click_at')}`;

/** Takes `old`'s link (−1, its counters) off its owner's row; the click times stay. */
const sqliteSubtract = `update link_owner_totals set links = links - 1, clicks = clicks - old.click_count,
    bots = bots - old.bot_clicks, unique_visitors = unique_visitors - old.unique_visitors
    where user_id = old.user_id and domain_id = old.domain_id`;

/**
 * A link's click times moving inwards (only a repair does that: migration 033 drops visits dated outside
 * 1970–9999): its owner's times are taken again from the links (one read of the owner's links, once).
 */
const inward = (o: string, n: string) =>
  `(${o}.first_click_at < ${n}.first_click_at or (${n}.first_click_at is null and ${o}.first_click_at is not null)
    or ${o}.last_click_at > ${n}.last_click_at or (${n}.last_click_at is null and ${o}.last_click_at is not null))`;
const sqliteInward = `update link_owner_totals set
    first_click_at = (select min(first_click_at) from links where user_id = new.user_id and domain_id = new.domain_id),
    last_click_at = (select max(last_click_at) from links where user_id = new.user_id and domain_id = new.domain_id)
    where user_id = new.user_id and domain_id = new.domain_id and ${inward('old', 'new')}`;

const COUNTERS = ['click_count', 'bot_clicks', 'unique_visitors', 'first_click_at', 'last_click_at'];
const counterChanged = COUNTERS.map((c) => `old.${c} is not new.${c}`).join(' or ');

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  for (const name of ['insert', 'delete', 'count', 'owner'])
    await sql`drop trigger if exists ${sql.raw(`links_owner_totals_${name}`)}`.execute(db);
  await sql`create trigger links_owner_totals_insert after insert on links when new.user_id is not null
    begin ${sql.raw(sqliteAdd('new'))}; end`.execute(db);
  await sql`create trigger links_owner_totals_delete after delete on links when old.user_id is not null
    begin ${sql.raw(sqliteSubtract)}; end`.execute(db);
  // The click writer's case: the same owner, its counters changed (one update of one row).
  await sql`create trigger links_owner_totals_count after update of ${sql.raw(COUNTERS.join(', '))} on links
    when new.user_id is not null and old.user_id = new.user_id and old.domain_id = new.domain_id and (${sql.raw(counterChanged)})
    begin update link_owner_totals set clicks = clicks + new.click_count - old.click_count,
      bots = bots + new.bot_clicks - old.bot_clicks, unique_visitors = unique_visitors + new.unique_visitors - old.unique_visitors,
      first_click_at = ${sql.raw(sqliteEdge('min', 'first_click_at', 'new.first_click_at'))},
      last_click_at = ${sql.raw(sqliteEdge('max', 'last_click_at', 'new.last_click_at'))}
      where user_id = new.user_id and domain_id = new.domain_id;
      ${sql.raw(sqliteInward)}; end`.execute(db);
  // Another owner or domain (a user deleted, a link moved to another domain): off the old row, onto the new.
  await sql`create trigger links_owner_totals_owner after update of user_id, domain_id on links
    when old.user_id is not new.user_id or old.domain_id <> new.domain_id
    begin ${sql.raw(sqliteSubtract)}; ${sql.raw(sqliteAdd('new'))}; end`.execute(db);
}

/** The rows a statement added (+1) and those it took away (−1), from its transition tables. */
const ADDED = `select user_id, domain_id, 1 as n, click_count, bot_clicks, unique_visitors, first_click_at, last_click_at
    from new_links where user_id is not null`;
const TAKEN = `select user_id, domain_id, -1 as n, -click_count as click_count, -bot_clicks as bot_clicks,
    -unique_visitors as unique_visitors, first_click_at, last_click_at from old_links where user_id is not null`;

/**
 * The changes grouped by owner, onto the totals; an owner whose sums did not change (an update of other columns)
 * is not written. The click times of the added rows only: they move outwards, never back.
 */
const applyChanges = (changes: string) => `insert into link_owner_totals as t
    (user_id, domain_id, links, clicks, bots, unique_visitors, first_click_at, last_click_at)
  select user_id, domain_id, sum(n), sum(click_count), sum(bot_clicks), sum(unique_visitors),
    min(first_click_at) filter (where n > 0), max(last_click_at) filter (where n > 0)
  from (${changes}) c
  group by user_id, domain_id
  having sum(n) <> 0 or sum(click_count) <> 0 or sum(bot_clicks) <> 0 or sum(unique_visitors) <> 0
    or min(first_click_at) filter (where n > 0) is distinct from min(first_click_at) filter (where n < 0)
    or max(last_click_at) filter (where n > 0) is distinct from max(last_click_at) filter (where n < 0)
  order by user_id, domain_id
  on conflict (user_id, domain_id) do update set links = t.links + excluded.links, clicks = t.clicks + excluded.clicks,
    bots = t.bots + excluded.bots, unique_visitors = t.unique_visitors + excluded.unique_visitors,
    first_click_at = least(t.first_click_at, excluded.first_click_at),
    last_click_at = greatest(t.last_click_at, excluded.last_click_at)`;

/** As sqliteInward, for the owners of the statement's links whose click times moved inwards. */
const POSTGRES_INWARD = `update link_owner_totals t set
    first_click_at = (select min(first_click_at) from links l where l.user_id = t.user_id and l.domain_id = t.domain_id),
    last_click_at = (select max(last_click_at) from links l where l.user_id = t.user_id and l.domain_id = t.domain_id)
  from (select distinct n.user_id, n.domain_id from old_links o join new_links n on n.id = o.id
    where n.user_id is not null and ${inward('o', 'n')}) moved
  where t.user_id = moved.user_id and t.domain_id = moved.domain_id`;

/**
 * One function for the three statement triggers, a branch each (a trigger has only its event's transition
 * tables: a DELETE has no new_links); each statement planned for the tables it is given (statement-triggers.ts).
 */
export const OWNER_TOTALS_TRIGGER: LinksTrigger = {
  trigger: 'owner_totals',
  body: `
begin
  if tg_op = 'INSERT' then ${planned(applyChanges(ADDED))};
  elsif tg_op = 'DELETE' then ${planned(applyChanges(TAKEN))};
  else ${planned(applyChanges(`${ADDED} union all ${TAKEN}`))};
    ${planned(POSTGRES_INWARD)};
  end if;
  return null;
end`,
};
