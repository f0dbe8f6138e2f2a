import type { Kysely } from 'kysely';

/**
 * An API key may be limited to domains (SPEC §19): `domains` holds their ids, comma-separated (the default
 * domain is 0); null: the key is not limited, as every key made before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('domains', 'varchar(2000)').execute();
}
