import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * An account's lifetime clicks keep those of its deleted (and expired, swept) links: when a link goes, its
 * click_count and bot_clicks move to its owner's row here. The account overview's "all time" is then never
 * below "this period", whose per-user rollups keep a deleted link's clicks too (SPEC §15, the dashboard's
 * overview).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('deleted_link_clicks', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('users')
    .addColumn('deleted_link_bots', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
}
