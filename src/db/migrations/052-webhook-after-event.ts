import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * `webhooks.after_event`: the greatest `events.id` when the hook was made. A hook hears the events after it, never
 * the ones before (modules/webhooks/webhook-fanout.ts), wherever the fan-out's position stands: with no hook at
 * all the fan-out no longer moves its position at every look (each move a write transaction, which on the embedded
 * engine waited on the event loop for the click writer's lock), so it may be behind when the first hook is made.
 * Existing hooks get 0: they heard everything already, as before.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('after_event', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
}
