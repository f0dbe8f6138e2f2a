import { randomBytes } from 'node:crypto';
import type { AuditEntry } from '../../db/audit-log.js';
import type { UserRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Jwt } from './jwt.js';
import type { TokensRepository } from './tokens.repository.js';

/** A bearer token as POST /tokens answers it (SPEC §4). */
export interface IssuedToken {
  jti: string;
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  expiresAt: string;
}

/**
 * A token for an account that has just proven who it is (SPEC §4's token). It is never dated before the
 * account's `tokens_valid_after` (a role change at this sign-in moved it), or it would be refused at once.
 */
export async function mintToken(
  deps: { tokens: Pick<TokensRepository, 'insert'>; jwt: Jwt; clock: Clock; ttlSeconds: number },
  user: Pick<UserRow, 'id' | 'role' | 'tokens_valid_after'>,
  audit?: AuditEntry,
): Promise<IssuedToken> {
  const { tokens, jwt, clock, ttlSeconds } = deps;
  // Tokens are valid from tokens_valid_after on (a password, role or status change): never issue one before it.
  const iat = Math.max(Math.floor(clock.now() / 1000), Math.ceil(Number(user.tokens_valid_after) / 1000));
  const exp = iat + ttlSeconds;
  const jti = randomBytes(16).toString('base64url');
  await tokens.insert({ jti, user_id: user.id, issued_at: iat * 1000, expires_at: exp * 1000 }, audit);
  const accessToken = await jwt.sign({ user_id: user.id, role: user.role, jti, iat, exp });
  return {
    jti,
    accessToken,
    tokenType: 'Bearer',
    expiresIn: ttlSeconds,
    expiresAt: new Date(exp * 1000).toISOString(),
  };
}
