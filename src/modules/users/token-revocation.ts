import type { UserRow } from '../../db/types.js';
import type { UserChanges } from './users.repository.js';

/**
 * What a change that revokes the user's earlier tokens (a password, role or status change, SPEC §12) adds to
 * its UPDATE: the token generation raised by 1 in that statement (the rule that decides is
 * tokens/token-generation.ts), and `tokens_valid_after` past now's second, never moved back, which only tokens
 * from before migration 051 and instances of an older build, during an upgrade, still read.
 */
export function tokenRevocation(
  row: Pick<UserRow, 'tokens_valid_after'>,
  now: number,
): Pick<UserChanges, 'revokeTokens' | 'tokens_valid_after'> {
  return {
    revokeTokens: true,
    tokens_valid_after: Math.max(Math.ceil((now + 1) / 1000) * 1000, Number(row.tokens_valid_after)),
  };
}
