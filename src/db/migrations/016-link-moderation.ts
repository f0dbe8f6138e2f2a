import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Moderation (SPEC §18): an admin may disable a link. `disabled_at` is when (null: the link is not disabled),
 * `disabled_reason` why (at most 500 characters, or null). A disabled link keeps its record and its code;
 * visits answer 410 LINK_DISABLED until an admin clears it. The partial index serves the admin list's
 * `status=disabled` filter, which looks at the few disabled links among all of them.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema.alterTable('links').addColumn('disabled_at', d.bigint).execute();
  await db.schema.alterTable('links').addColumn('disabled_reason', 'varchar(2000)').execute();
  await db.schema
    .createIndex('links_disabled_idx')
    .on('links')
    .columns(['disabled_at', 'id'])
    .where(sql.ref('disabled_at'), 'is not', null)
    .execute();
}
