import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Short links (SPEC §6) and their clicks.
 *
 * - `link_codes` is the one uniqueness space of short codes: a code is inserted here before its link, and the
 *   row stays when the link is deleted or swept after expiry (a tombstone), so the generator can never hand
 *   the code out again and a visit can still tell 410 (expired) from 404.
 * - `clicks` are the raw records; the counters on `links` (click_count, unique_visitors, first/last click)
 *   and the rollups (`link_click_hourly`, `link_click_daily_values`, `link_visitors`) are written in the same
 *   transaction, so statistics read a bounded number of rows whatever the number of clicks.
 */
// The rollup tables and link_codes are clustered by their primary key on SQLite (one B-tree each): every
// click touches them, and halving the pages a flush dirties measurably cut its cost (bench/redirect.ts).
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_codes'))
    .addColumn('code', d.caseSensitiveString(8), (c) => c.primaryKey())
    .addColumn('retired_at', d.bigint)
    .addColumn('retired_reason', 'varchar(16)')
    .execute();

  await d
    .addIdColumn(db.schema.createTable('links'))
    .addColumn('short_code', d.caseSensitiveString(8), (c) => c.notNull().unique().references('link_codes.code'))
    .addColumn('user_id', d.bigint, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('original_url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('expires_at', d.bigint)
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('click_count', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('unique_visitors', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('first_click_at', d.bigint)
    .addColumn('last_click_at', d.bigint)
    .execute();
  await db.schema.createIndex('links_user_id_idx').on('links').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('links_user_created_idx').on('links').columns(['user_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('links_expires_at_idx').on('links').column('expires_at').execute();

  await d
    .addIdColumn(db.schema.createTable('clicks'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('short_code', d.caseSensitiveString(8), (c) => c.notNull())
    .addColumn('clicked_at', d.bigint, (c) => c.notNull())
    .addColumn('ip', 'varchar(45)')
    .addColumn('user_agent', 'varchar(512)')
    .addColumn('referrer', 'varchar(2048)')
    .execute();
  await db.schema.createIndex('clicks_link_clicked_idx').on('clicks').columns(['link_id', 'clicked_at']).execute();

  // Per link and UTC hour: the time series and window totals.
  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_click_hourly'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('hour_start', d.bigint, (c) => c.notNull())
    .addColumn('clicks', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_click_hourly_pk', ['link_id', 'hour_start'])
    .execute();

  // Per link, UTC day and kind (referrer | user_agent): clicks per value, at most a bounded number of values
  // per (link, day, kind); the rest is folded into one "(other)" row.
  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_click_daily_values'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('kind', 'varchar(16)', (c) => c.notNull())
    .addColumn('day_start', d.bigint, (c) => c.notNull())
    .addColumn('value', 'varchar(255)', (c) => c.notNull())
    .addColumn('clicks', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('link_click_daily_values_pk', ['link_id', 'kind', 'day_start', 'value'])
    .execute();

  // Distinct client addresses per link: a new row here is a new unique visitor.
  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_visitors'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('ip', 'varchar(45)', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_visitors_pk', ['link_id', 'ip'])
    .execute();
}
