import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Analytics (SPEC §15).
 *
 * - Click records gain what the writer derives from the visit: `is_bot` (0/1), `browser`, `os`, `device`
 *   (ua-parser-js, once per distinct user agent) and `country` (ISO 3166-1 alpha-2 or null). `referrer` exists
 *   since 004. Old records keep nulls (and is_bot 0: they were counted as visits when they were made).
 * - `links.bot_clicks` and `link_click_hourly.bots`: bots counted apart (click_count and `clicks` stay the
 *   total); human = total − bots. The new top lists (browser, os, device, country) are further kinds of
 *   `link_click_daily_values`, which already bounds the values kept per link, kind and day.
 * - The per-user rollups make GET /users/{id}/stats cost what a link's costs, whatever the number of links:
 *   `user_click_hourly` (clicks and bots per user and UTC hour) and `user_click_daily_values` (the same kinds
 *   plus `link`, whose value is the short code: the top links), bounded per user, kind and day the same way.
 *   They are filled here from the link rollups that exist, so a user's history starts with their links'.
 * - `click_ingest`: when each writer last completed a flush (`data_fresh_as_of`).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('clicks')
    .addColumn('is_bot', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('clicks').addColumn('browser', 'varchar(64)').execute();
  await db.schema.alterTable('clicks').addColumn('os', 'varchar(64)').execute();
  await db.schema.alterTable('clicks').addColumn('device', 'varchar(8)').execute();
  await db.schema.alterTable('clicks').addColumn('country', 'varchar(2)').execute();
  await db.schema
    .alterTable('links')
    .addColumn('bot_clicks', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('link_click_hourly')
    .addColumn('bots', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();

  await d
    .clusteredByPrimaryKey(db.schema.createTable('user_click_hourly'))
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('hour_start', d.bigint, (c) => c.notNull())
    .addColumn('clicks', d.bigint, (c) => c.notNull())
    .addColumn('bots', d.bigint, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('user_click_hourly_pk', ['user_id', 'hour_start'])
    .execute();
  await d
    .clusteredByPrimaryKey(db.schema.createTable('user_click_daily_values'))
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('day_start', d.bigint, (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('clicks', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('user_click_daily_values_pk', ['user_id', 'kind', 'day_start', 'value'])
    .execute();
  await db.schema
    .createTable('click_ingest')
    .addColumn('writer', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('fresh_as_of', d.bigint, (c) => c.notNull())
    .execute();

  await sql`insert into user_click_hourly (user_id, hour_start, clicks, bots)
    select l.user_id, h.hour_start, sum(h.clicks), 0 from link_click_hourly h join links l on l.id = h.link_id
    where l.user_id is not null group by l.user_id, h.hour_start`.execute(db);
  await sql`insert into user_click_daily_values (user_id, kind, day_start, value, clicks)
    select l.user_id, v.kind, v.day_start, v.value, sum(v.clicks) from link_click_daily_values v join links l on l.id = v.link_id
    where l.user_id is not null group by l.user_id, v.kind, v.day_start, v.value`.execute(db);
  await sql`insert into user_click_daily_values (user_id, kind, day_start, value, clicks)
    select l.user_id, 'link', (h.hour_start / 86400000) * 86400000, l.short_code, sum(h.clicks) from link_click_hourly h join links l on l.id = h.link_id
    where l.user_id is not null group by l.user_id, (h.hour_start / 86400000) * 86400000, l.short_code`.execute(db);
}
