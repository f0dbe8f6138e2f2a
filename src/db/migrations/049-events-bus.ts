import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SPEC §22's message bus (EVENTS_URL, modules/events/bus-publisher.ts): `events_bus_positions` holds how far the
 * publisher has published the `events` table (043). It moves only after the bus confirmed every event up to it, so
 * a publisher that dies, or a bus that drops the connection, leaves it where the events are read again from (at
 * least once). `published`: the greatest position published so far; on PostgreSQL `position` may stay below it
 * while an id in between has not committed (db/id-cursor.ts), and what lies between is published again after a
 * restart. One row per bus (`name`: `bus`); `updated_at` tells an operator when it last moved.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .createTable('events_bus_positions')
    .addColumn('name', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('position', d.bigint, (c) => c.notNull())
    .addColumn('published', d.bigint, (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
}
