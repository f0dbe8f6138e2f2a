import type { AuditEntry } from '../../db/audit-log.js';
import type { UserRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Jwt } from './jwt.js';
import { jtiAt } from './token-generation.js';
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
 * A token for an account that has just proven who it is (SPEC §4's token), valid while the account's token
 * generation is the one read here (token-generation.ts): a password, role or status change that commits after
 * that read revokes it, as it revokes every token issued before it.
 */
export async function mintToken(
  deps: { tokens: Pick<TokensRepository, 'insert'>; jwt: Jwt; clock: Clock; ttlSeconds: number },
  user: Pick<UserRow, 'id' | 'role' | 'token_generation'>,
  audit?: AuditEntry,
): Promise<IssuedToken> {
  const { tokens, jwt, clock, ttlSeconds } = deps;
  const iat = Math.floor(clock.now() / 1000);
  const exp = iat + ttlSeconds;
  const jti = jtiAt(Number(user.token_generation));
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
