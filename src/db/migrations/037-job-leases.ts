import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `job_leases`: one row per periodic job (infra/job-runner.ts), through which the instances sharing the database
 * take turns. An instance runs a job only after claiming its row with one conditional upsert: the last run started
 * a period ago or more, and no lease is held (`lease_until` null, or past: its holder stopped renewing it).
 * `holder` is the instance that ran (or runs) it; `finished_at` is null while a run is under way or was cut short.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .clusteredByPrimaryKey(db.schema.createTable('job_leases'))
    .addColumn('name', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('holder', 'varchar(200)', (c) => c.notNull())
    .addColumn('lease_until', d.bigint)
    .addColumn('started_at', d.bigint, (c) => c.notNull())
    .addColumn('finished_at', d.bigint)
    .execute();
}
