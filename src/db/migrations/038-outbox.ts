import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `outbox`: every change of links, aliases, domains, users, API keys and imports as a typed event
 * (db/outbox-events.ts), written in the change's own transaction, so a row exists if and only if its change
 * committed. Consumers read it in id order from the last id they saw (db/outbox.ts); the link cache's feed is
 * the first (infra/outbox-feed.ts), SPEC §22's webhooks and event stream are next. `origin` names the app
 * instance that made the change (null: nobody in particular, every consumer applies it). Rows older than the
 * retention are swept (created_at's index). `link_changes` (027), the string protocol it replaces, goes.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('outbox'))
    .addColumn('type', 'varchar(60)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('origin', 'varchar(40)')
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outbox_created_at').on('outbox').column('created_at').execute();
  if (d.name === 'sqlite') await sql`drop table if exists link_changes`.execute(db);
}
