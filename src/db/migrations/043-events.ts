import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `events`: SPEC §22's public events (`link.created`, `link.clicked`, `domain.verified`, …), each row the whole
 * envelope `{ id, type, timestamp, data }` as webhooks, the live stream and the bus send it, written in the same
 * transaction as the change it reports (db/events.ts). The outbox (038) stays the house's own change feed, with the
 * few fields its consumers need; these rows carry what a receiver outside sees, so the two are kept apart. `id` is
 * the order consumers read in (and the stream's position); `event_id` the `evt_…` a receiver deduplicates on.
 * `user_id`: whose link or domain it is (null: the instance's, for admins and instance-wide hooks only).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('events'))
    .addColumn('event_id', 'varchar(40)', (c) => c.notNull().unique())
    .addColumn('type', 'varchar(60)', (c) => c.notNull())
    .addColumn('user_id', d.bigint)
    .addColumn('domain_id', d.bigint)
    .addColumn('link_id', d.bigint)
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_created_at').on('events').column('created_at').execute();
  await db.schema.createIndex('events_user_id').on('events').columns(['user_id', 'id']).execute();
}
