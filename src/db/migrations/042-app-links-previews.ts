import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SPEC §21's app links and previews for unfurlers, stored as the API checked them (JSON text, at most
 * 32 KiB each; null: none):
 * - `links.preview`: `{ "title", "description"?, "image_url"? }` (the card unfurlers are shown).
 * - `domains.apple_app_site_association` (an object) and `domains.android_asset_links` (an array): what the
 *   domain's host answers at `/.well-known/apple-app-site-association` and `/.well-known/assetlinks.json`.
 * - `instance_settings`: the same two documents for the default domain, set by an admin (`PATCH /instance`),
 *   one row per name.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema.alterTable('links').addColumn('preview', 'text').execute();
  await db.schema.alterTable('domains').addColumn('apple_app_site_association', 'text').execute();
  await db.schema.alterTable('domains').addColumn('android_asset_links', 'text').execute();
  await d
    .clusteredByPrimaryKey(db.schema.createTable('instance_settings'))
    .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
}
