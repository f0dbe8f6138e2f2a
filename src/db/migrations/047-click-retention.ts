import type { Kysely } from 'kysely';

/**
 * SPEC §24's click retention per domain: `domains.click_retention_days` (null: the instance's
 * CLICK_RETENTION_DAYS; 0: forever; n: click records older than n days are deleted by the `click-retention`
 * job, clicks/click-retention.ts). No index is added: the job walks links and deletes through
 * `clicks_link_clicked_idx` (link_id, clicked_at), which every click already pays for.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('domains').addColumn('click_retention_days', 'integer').execute();
}
