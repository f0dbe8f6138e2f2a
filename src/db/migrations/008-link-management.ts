import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Link management (SPEC §13).
 *
 * - `version` (+1 on every change) makes the link's ETag (`"link-{id}-v{version}"`) and lets a PATCH with
 *   If-Match be a conditional UPDATE; `updated_at` is the time of the last change.
 * - `max_visits` and `visit_count`: visit_count counts the human GET visits that were redirected; a visit is
 *   admitted by one conditional UPDATE (`visit_count < max_visits`), so concurrent visits on any number of
 *   instances never admit more than max_visits (modules/redirect/visit-policy.ts).
 * - `forward_query`: 0 or 1 on both engines.
 * - `password_hash`: the scrypt hash of users' passwords (modules/users/password.ts), null without a password.
 * - `tags`: the link's tags as one comma-separated text (tags are `a-z 0-9 -`), so that reading a link stays
 *   one row; `link_tags` holds the same tags one per row, written in the same transaction, for the `tag` filter.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('links')
    .addColumn('updated_at', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('links')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('links').addColumn('max_visits', d.bigint).execute();
  await db.schema
    .alterTable('links')
    .addColumn('visit_count', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('links')
    .addColumn('forward_query', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('links').addColumn('password_hash', 'varchar(255)').execute();
  await db.schema
    .alterTable('links')
    .addColumn('tags', 'varchar(400)', (c) => c.notNull().defaultTo(''))
    .execute();
  await (db as Kysely<{ links: { updated_at: number; created_at: number } }>)
    .updateTable('links')
    .set((eb) => ({ updated_at: eb.ref('created_at') }))
    .execute();

  await d
    .clusteredByPrimaryKey(db.schema.createTable('link_tags'))
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addColumn('tag', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('link_tags_pk', ['link_id', 'tag'])
    .execute();
  await db.schema.createIndex('link_tags_tag_idx').on('link_tags').columns(['tag', 'link_id']).execute();
}
