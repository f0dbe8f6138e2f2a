import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * SPEC §12: a change of password, role or status revokes every token issued to that user before it. Each
 * user row carries the instant (epoch ms, a whole second: JWT `iat` is in seconds) from which tokens are
 * valid; authentication reads the user row anyway, so every instance sees a change at once. 0: all tokens.
 */
export async function up(db: Kysely<unknown>, d: Dialect): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('tokens_valid_after', d.bigint, (c) => c.notNull().defaultTo(0))
    .execute();
}
