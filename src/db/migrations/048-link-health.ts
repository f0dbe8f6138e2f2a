import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SPEC §24's destination checks (modules/link-checks):
 * - `links.health_*`: the link's `health` as the API shows it (`status` 'ok' | 'broken' | 'unknown', the last
 *   check's time, HTTP status and error, and since when the status holds) and `health_failures`, the failed
 *   checks in a row (two make a link broken).
 * - `links.next_check_at`: when the link's destination is due for a check; 0 (the default) is "now", which every
 *   existing link and every new one gets: the checker takes due links in this order at its rate, then spreads the
 *   next checks over the interval. null: not scheduled (LINK_CHECKS=false never clears it).
 * - `links.fallback_url`, `domains.broken_redirect`: where a broken link's visits go (the link's first).
 * The partial index on `health_status` serves `health=broken` (and `unknown`) among mostly healthy links; the
 * index on `next_check_at` the checker's claim of due links.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('links')
    .addColumn('health_status', 'varchar(10)', (c) => c.notNull().defaultTo('unknown'))
    .execute();
  await db.schema.alterTable('links').addColumn('health_checked_at', d.bigint).execute();
  await db.schema.alterTable('links').addColumn('health_http_status', 'integer').execute();
  await db.schema.alterTable('links').addColumn('health_error', 'varchar(200)').execute();
  await db.schema.alterTable('links').addColumn('health_since', d.bigint).execute();
  await db.schema
    .alterTable('links')
    .addColumn('health_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('links')
    .addColumn('next_check_at', d.bigint, (c) => c.defaultTo(0))
    .execute();
  await db.schema.alterTable('links').addColumn('fallback_url', 'text').execute();
  await db.schema.alterTable('domains').addColumn('broken_redirect', 'text').execute();
  await db.schema
    .createIndex('links_next_check_idx')
    .on('links')
    .columns(['next_check_at', 'id'])
    .where(sql.ref('next_check_at'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('links_health_idx')
    .on('links')
    .columns(['health_status', 'id'])
    .where(sql.ref('health_status'), '<>', 'ok')
    .execute();
}
