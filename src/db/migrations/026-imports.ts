import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Imports from other link services (SPEC §20).
 *
 * - `import_jobs`: one run of an importer (CLI or admin endpoint): its source and options (never the API key
 *   or the database password), owner, state and counts. The counts move with each batch's transaction, so
 *   they always say what is committed.
 * - `import_items`: per source item, what the run did (created, unchanged, conflict, failed, and for a dry
 *   run what it would do), with the reason; the job resource lists the ones that were not created.
 * - `import_links`: which link each source item became, keyed by the source (kind and address), the item's
 *   domain and code: a re-run of the same source finds its items there and changes nothing, and a run
 *   interrupted between two batches resumes where it stopped.
 * - `clicks.imported`: 1 for a visit brought from the source (SPEC §20: `imported: true`).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('import_jobs'))
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .addColumn('source_key', 'varchar(600)', (c) => c.notNull())
    .addColumn('options', 'varchar(4000)', (c) => c.notNull())
    .addColumn('owner_id', d.bigint, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_by', d.bigint, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('state', 'varchar(16)', (c) => c.notNull())
    .addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('on_conflict', 'varchar(8)', (c) => c.notNull())
    .addColumn('items', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('created', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('unchanged', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('conflicts', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('failed', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('visits', d.bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'varchar(1000)')
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .addColumn('finished_at', d.bigint)
    .execute();

  await d
    .clusteredByPrimaryKey(db.schema.createTable('import_items'))
    .addColumn('job_id', d.bigint, (c) => c.notNull().references('import_jobs.id').onDelete('cascade'))
    .addColumn('seq', d.bigint, (c) => c.notNull())
    .addColumn('source_ref', 'varchar(600)', (c) => c.notNull())
    .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
    .addColumn('short_code', 'varchar(64)')
    .addColumn('message', 'varchar(1000)')
    .addPrimaryKeyConstraint('import_items_pk', ['job_id', 'seq'])
    .execute();

  await d
    .clusteredByPrimaryKey(db.schema.createTable('import_links'))
    .addColumn('source_key', 'varchar(600)', (c) => c.notNull())
    .addColumn('source_domain', 'varchar(253)', (c) => c.notNull())
    .addColumn('source_code', d.caseSensitiveString(300), (c) => c.notNull())
    .addColumn('link_id', d.bigint, (c) => c.notNull().references('links.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('import_links_pk', ['source_key', 'source_domain', 'source_code'])
    .execute();
  await db.schema.createIndex('import_links_link_idx').on('import_links').column('link_id').execute();

  await db.schema
    .alterTable('clicks')
    .addColumn('imported', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
