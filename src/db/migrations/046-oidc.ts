import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Single sign-on (SPEC §23).
 * - `user_identities`: the account an OpenID provider's subject signs in as, found by (issuer, `sub`) and
 *   never by username or e-mail. It goes with its account (cascade): a deleted account's next sign-in is a
 *   first one again.
 * - `login_codes`: what the callback hands the dashboard (`/app/?login_code=…`) to exchange for a token once,
 *   within 60 s. Only the code's SHA-256 is kept; the exchange deletes the row, so a code works once.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await d
    .clusteredByPrimaryKey(db.schema.createTable('user_identities'))
    .addColumn('issuer', d.caseSensitiveString(255), (c) => c.notNull())
    .addColumn('subject', d.caseSensitiveString(255), (c) => c.notNull())
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', d.bigint, (c) => c.notNull())
    .addColumn('last_sign_in_at', d.bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('user_identities_pk', ['issuer', 'subject'])
    .execute();
  await db.schema.createIndex('user_identities_user_idx').on('user_identities').column('user_id').execute();
  await d
    .clusteredByPrimaryKey(db.schema.createTable('login_codes'))
    .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('user_id', d.bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('expires_at', d.bigint, (c) => c.notNull())
    .execute();
}
