import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  // Orders belong to a user and go with them (SPEC §3: deleting a user deletes their orders).
  await d
    .addIdColumn(db.schema.createTable('orders'))
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('item_id', d.bigint, (c) => c.notNull())
    .addColumn('quantity', 'integer', (c) => c.notNull())
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .execute();
  // One index per sort key of GET /users/{id}/orders, each ending in id for the keyset tie-break.
  await db.schema.createIndex('orders_user_id_idx').on('orders').columns(['user_id', 'id']).execute();
  await db.schema
    .createIndex('orders_user_created_idx')
    .on('orders')
    .columns(['user_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('orders_user_item_idx').on('orders').columns(['user_id', 'item_id', 'id']).execute();
  await db.schema.createIndex('orders_user_quantity_idx').on('orders').columns(['user_id', 'quantity', 'id']).execute();

  // Idempotency keys (plugins/idempotency.ts). The primary key on (scope, idem_key) is what decides who owns
  // a key: a claim is an INSERT, and only one INSERT per key can succeed. A row is "locked" while lock_id is
  // set and "completed" once response_status is; user_id (null for anonymous scopes) lets a deleted user's
  // stored responses go with them.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'varchar(80)', (c) => c.notNull())
    .addColumn('idem_key', 'varchar(255)', (c) => c.notNull())
    .addColumn('user_id', d.bigint, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('lock_id', 'varchar(36)')
    .addColumn('locked_at', d.bigint)
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('expires_at', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at_idx').on('idempotency_keys').column('expires_at').execute();
  await db.schema.createIndex('idempotency_keys_user_id_idx').on('idempotency_keys').column('user_id').execute();
}
