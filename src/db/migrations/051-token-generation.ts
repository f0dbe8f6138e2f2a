import type { Kysely } from 'kysely';

/**
 * SPEC §12: a password, role or status change revokes every token issued to the user before it (issue 41).
 * `tokens_valid_after` (011) compared instants in whole seconds (JWT `iat`), so two changes within one second
 * shared one instant, and a token issued between them outlived the second. `users.token_generation` counts the
 * revoking changes instead: each one adds 1 in its own UPDATE, a token carries the generation it was issued at
 * (in its jti, tokens/token-mint.ts, since SPEC §4 fixes the payload's claims), and a token of an earlier
 * generation is refused. 0 for every existing user: their tokens keep working until the next such change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('users')
    .addColumn('token_generation', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
