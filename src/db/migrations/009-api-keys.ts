import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * API keys (SPEC §14). Only a keyed hash of the key is stored (`key_hash`, unique: the lookup of every request
 * made with a key); `prefix` is the first 8 characters after `fry_`, shown so people can tell keys apart.
 * `scopes` is the space-separated list. A key goes with its user (cascade); revoking deletes the row.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('api_keys'))
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'varchar(64)', (c) => c.notNull())
    .addColumn('prefix', d.caseSensitiveString(8), (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('scopes', 'varchar(128)', (c) => c.notNull())
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('expires_at', d.bigint)
    .addColumn('last_used_at', d.bigint)
    .execute();
  await db.schema
    .createIndex('api_keys_user_created_idx')
    .on('api_keys')
    .columns(['user_id', 'created_at', 'id'])
    .execute();
}
