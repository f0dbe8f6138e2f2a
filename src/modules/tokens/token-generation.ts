import { randomBytes } from 'node:crypto';
import type { UserRow } from '../../db/types.js';

/**
 * SPEC §12: a password, role or status change revokes every token issued to the user before it. Each such
 * change raises `users.token_generation` by 1 (migration 051), and a token is valid only at the generation it
 * was issued at. Comparing issue instants cannot do this: JWT `iat` is in whole seconds, and two changes within
 * one second left the token issued between them valid (issue 41).
 *
 * SPEC §4 fixes the payload's claims ({user_id, role, exp, iat, jti}), so the generation rides in the jti, which
 * is opaque to clients and signed with the rest: 16 random bytes (22 base64url characters), then `g<generation>`.
 * A jti of the 22 characters alone is a token issued before 051, checked by the rule of its time.
 */
const RANDOM_CHARS = 22;
const GENERATION = /^g(0|[1-9][0-9]{0,9})$/;

/** A new token's jti, carrying the user's current generation. */
export const jtiAt = (generation: number): string => `${randomBytes(16).toString('base64url')}g${generation}`;

/** Whether a token was issued before the user's latest password, role or status change: then it is refused. */
export function issuedBeforeLastChange(
  claims: { jti: string; iat: number },
  user: Pick<UserRow, 'token_generation' | 'tokens_valid_after'>,
): boolean {
  if (claims.jti.length === RANDOM_CHARS)
    return Number(user.token_generation) > 0 || claims.iat * 1000 < Number(user.tokens_valid_after);
  const generation = GENERATION.exec(claims.jti.slice(RANDOM_CHARS));
  // Another generation than the current one: an earlier (revoked), or a later one that a restore of an older
  // backup took back; either way not a token of the account as it now stands.
  return generation === null || Number(generation[1]) !== Number(user.token_generation);
}
