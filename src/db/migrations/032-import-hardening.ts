import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Imports that cannot hurt an instance (SPEC §25), and history that keeps coming (a re-run brings new visits).
 *
 * - `import_jobs.visits_skipped`: visits left out because their date lies outside 1970–9999.
 * - `import_jobs.heartbeat_at`: the running job's pulse (every few seconds); a `running` job whose pulse stopped
 *   (its process died) is shown `interrupted` rather than `running` forever.
 * - `import_jobs.cancel_requested_at`: DELETE /api/v1/imports/{id} on any instance; the instance running the job
 *   stops it at its next transaction boundary (state `cancelled`).
 * - `import_items.error_code`, `.visits`: the error code the API would answer for a failed item, and the visits
 *   the item brought in this run.
 * - `import_links.visits`, `.visits_cursor`: how many of the item's visits are in Ferry and the source's mark of
 *   the last one, written in the same transaction as those visits: a run cut off in the middle of a link's
 *   history, and a later re-run, go on after it.
 * - `import_links.source_key` gains the owner (`…#owner=<id>`): "imported before" is per owner, so another owner's
 *   import of the same rows creates their links.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('import_jobs')
    .addColumn('visits_skipped', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('import_jobs').addColumn('heartbeat_at', d.bigint).execute();
  await db.schema.alterTable('import_jobs').addColumn('cancel_requested_at', d.bigint).execute();
  await db.schema.alterTable('import_items').addColumn('error_code', 'varchar(32)').execute();
  await db.schema
    .alterTable('import_items')
    .addColumn('visits', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('import_links')
    .addColumn('visits', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('import_links').addColumn('visits_cursor', 'varchar(100)').execute();
  await sql`update import_links set source_key = source_key || '#owner=' || cast(coalesce((select user_id from links where links.id = import_links.link_id), 0) as varchar(20))`.execute(
    db,
  );
  // Jobs that were running when this version started ran in a process that is gone.
  await sql`update import_jobs set state = 'interrupted', error = 'interrupted by an upgrade: run the same import again to bring the rest' where state = 'running'`.execute(
    db,
  );
}
