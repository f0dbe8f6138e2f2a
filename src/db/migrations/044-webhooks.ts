import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SPEC §22's webhooks. `webhooks`: the hooks (a user's, or an admin's instance-wide one), each with its signing
 * secret encrypted at rest (AES-256-GCM under a key derived from the instance's JWT secret: it must be usable to
 * sign, so it cannot be hashed) and, for 24 hours after a rotation, the previous one. `webhook_deliveries`: one row
 * per attempt — a pending row (`attempted_at` null) is the next attempt, claimed by one instance at a time through
 * `claimed_until` (a lease: a process killed mid-delivery leaves it to be retried once it passes); an attempt that
 * fails adds the next one. `fanout_key` (hook and event) makes the fan-out from `events` idempotent when it re-reads
 * events. `webhook_positions`: how far the fan-out read the events table, moved in the transaction that writes the
 * deliveries (at least once).
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('webhooks'))
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scope', 'varchar(10)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('domains', 'text')
    .addColumn('include_bots', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('description', 'varchar(256)')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'varchar(256)')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', d.bigint)
    .addColumn('failing_since', d.bigint)
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_user_id').on('webhooks').columns(['user_id', 'id']).execute();

  await d
    .addIdColumn(db.schema.createTable('webhook_deliveries'))
    .addColumn('webhook_id', d.bigint, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('event_type', 'varchar(60)', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('fanout_key', 'varchar(80)', (c) => c.unique())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('first_due_at', d.bigint, (c) => c.notNull())
    .addColumn('due_at', d.bigint, (c) => c.notNull())
    .addColumn('claimed_until', d.bigint)
    .addColumn('attempted_at', d.bigint)
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('error', 'varchar(512)')
    .addColumn('response_body', 'text')
    .addColumn('next_attempt_at', d.bigint)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['attempted_at', 'due_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_positions')
    .addColumn('name', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('position', d.bigint, (c) => c.notNull())
    .execute();
}
