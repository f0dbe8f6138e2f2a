import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  // Issued tokens, so that DELETE /tokens/{jti} can tell the owner; gone with their user.
  await db.schema
    .createTable('tokens')
    .addColumn('jti', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('issued_at', d.bigint, (c) => c.notNull())
    .addColumn('expires_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('tokens_expires_at_idx').on('tokens').column('expires_at').execute();
  // The deny list: a revoked jti stays until its token would have expired anyway.
  await db.schema
    .createTable('revoked_tokens')
    .addColumn('jti', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('expires_at', d.bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('revoked_tokens_expires_at_idx').on('revoked_tokens').column('expires_at').execute();
}
