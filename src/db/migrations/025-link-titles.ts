import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * A link's `title` (SPEC §20): at most 200 characters, null when it has none. Importers fill it from the
 * source (Shlink's title, Kutt's description, YOURLS's page title); `q` searches it with the URL and the code.
 * varchar(800): 200 characters of any script stay within it on both engines.
 */
export async function up(db: Kysely<unknown>, _d: Dialect): Promise<void> {
  await db.schema.alterTable('links').addColumn('title', 'varchar(800)').execute();
}
