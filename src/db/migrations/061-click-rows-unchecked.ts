import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { linksStatementTriggers, planned, type LinksTrigger } from '../statement-triggers.js';

/** The tables a click batch writes rows of per link: the records and the link's rollups. */
export const CLICK_ROW_TABLES = [
  'clicks',
  'link_visitors',
  'link_click_hourly',
  'link_click_daily_values',
  'link_click_daily_choices',
] as const;

/**
 * PostgreSQL: the tables a click batch writes per link lose their foreign keys to `links`; a statement trigger
 * deletes a deleted link's rows in them instead, as the keys' cascade did (issue 37 item 3).
 *
 * Each row a batch inserted was checked against `links` by its foreign key, one `select … for key share` a row:
 * about nine a click (the record, a visitor, an hour, six daily values), for links the batch has locked already
 * (pg-set-writer.ts's lockLinks; the row-by-row writer's counter update), so they could not have gone: 2.8 s of
 * the statements' 27.4 s in a one-worker drain of 100,000 clicks, and with the trigger queue that runs them about
 * a seventh of PostgreSQL's CPU a click (docs/performance.md, "Writing clicks"). The embedded engine's click
 * writer skips the same checks for the same reason (its connection's `foreign_keys` off).
 *
 * What keeps a click of a deleted link out is now the writers' lock on the link: a delete waits for a batch that
 * holds it and the trigger then removes what the batch wrote; a batch that comes after the delete finds no link
 * and drops its clicks. SQLite: nothing (the keys stay; only its click writer's connection skips them).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  if (d.name !== 'postgres') return;
  await linksStatementTriggers(db, CLICK_ROWS_TRIGGER);
  const { rows } = await sql<{ table: string; name: string }>`select conrelid::regclass::text as table,
      conname as name from pg_constraint
    where contype = 'f' and confrelid = 'links'::regclass and conparentid = 0
      and conrelid = any(${[...CLICK_ROW_TABLES]}::text[]::regclass[])`.execute(db);
  for (const r of rows) await sql`alter table ${sql.table(r.table)} drop constraint ${sql.ref(r.name)}`.execute(db);
}

/** A deleted link's rows in CLICK_ROW_TABLES, deleted with it (its clicks' partitions each by their link index). */
export const CLICK_ROWS_TRIGGER: LinksTrigger = {
  trigger: 'click_rows',
  events: ['delete'],
  body: `
begin
  ${CLICK_ROW_TABLES.map((table) => planned(`delete from ${table} where link_id in (select id from old_links)`)).join(';\n  ')};
  return null;
end`,
};
