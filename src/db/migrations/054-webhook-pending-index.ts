import { sql, type Kysely } from 'kysely';

/**
 * `webhook_deliveries_pending` (due_at) WHERE attempted_at IS NULL, instead of `webhook_deliveries_due`
 * (attempted_at, due_at): the dispatcher asks several times a second for the attempts due, oldest first
 * (modules/webhooks/webhook-attempts.ts). On PostgreSQL each attempt recorded leaves its old row version in the
 * index until a vacuum, and the look for due attempts walked them all: after 10,000 deliveries, 16,000 index
 * entries and 885 heap pages for no row, 2.3 ms a look, the dispatcher's pace (bench/webhooks.ts: 500 events a
 * second). The partial index holds only attempts not made yet, in the order they are asked for.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending')
    .on('webhook_deliveries')
    .column('due_at')
    .where(sql.ref('attempted_at'), 'is', null)
    .execute();
  await db.schema.dropIndex('webhook_deliveries_due').execute();
}
