import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `import_sources`: per source and owner (import_links' source_key), the mark of the source's visit log that its
 * last whole run read through (YOURLS: the greatest click_id then). A later run reads only the log rows after it
 * (besides the whole history of items that run did not import), so importing again just before the switch reads
 * what is new, not the whole log again (docs/migrating.md).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .clusteredByPrimaryKey(db.schema.createTable('import_sources'))
    .addColumn('source_key', 'varchar(600)', (c) => c.primaryKey())
    .addColumn('visits_through', 'varchar(100)', (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
}
