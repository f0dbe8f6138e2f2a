import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .addIdColumn(db.schema.createTable('users'))
    .addColumn('username', 'varchar(32)', (c) => c.notNull())
    .addColumn('username_lower', 'varchar(32)', (c) => c.notNull().unique())
    .addColumn('email', 'varchar(254)', (c) => c.notNull())
    .addColumn('email_lower', 'varchar(254)', (c) => c.notNull().unique())
    .addColumn('password_hash', 'varchar(255)', (c) => c.notNull())
    .addColumn('role', 'varchar(16)', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)')
    .addColumn('age', 'integer')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('updated_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_created_at_idx').on('users').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('users_role_idx').on('users').columns(['role', 'id']).execute();
}
