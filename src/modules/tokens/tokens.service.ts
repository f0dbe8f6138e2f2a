import { randomBytes } from 'node:crypto';
import { AppError, forbidden, InvalidTokenError, notFound } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { PasswordHasher } from '../users/password.js';
import type { Jwt } from './jwt.js';
import type { TokenDenyList, TokensRepository } from './tokens.repository.js';

export interface IssuedToken {
  jti: string;
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  expiresAt: string;
}

export { InvalidTokenError };

export type TokensService = ReturnType<typeof createTokensService>;

export function createTokensService(deps: {
  users: Pick<UsersRepository, 'findById' | 'findByUsername'>;
  tokens: TokensRepository;
  passwords: Pick<PasswordHasher, 'verify' | 'decoy'>;
  denyList: TokenDenyList;
  jwt: Jwt;
  clock: Clock;
  ttlSeconds: number;
}) {
  const { users, tokens, passwords, denyList, jwt, clock, ttlSeconds } = deps;

  return {
    /**
     * Checks the password against the user's hash, or against a decoy hash when there is no such user, so
     * both failures cost one scrypt and answer the same 401.
     */
    async issue(username: string, password: string): Promise<IssuedToken> {
      const user = await users.findByUsername(username);
      const ok = await passwords.verify(password, user?.password_hash ?? (await passwords.decoy()));
      if (!user || !ok) throw new AppError('UNAUTHENTICATED', 'Invalid username or password', [], { 'WWW-Authenticate': 'Bearer realm="ferry"' });
      if (user.status === 'suspended') throw forbidden('This account is suspended');
      const iat = Math.floor(clock.now() / 1000);
      const exp = iat + ttlSeconds;
      const jti = randomBytes(16).toString('base64url');
      await tokens.insert({ jti, user_id: user.id, issued_at: iat * 1000, expires_at: exp * 1000 });
      const accessToken = await jwt.sign({ user_id: user.id, role: user.role, jti, iat, exp });
      return { jti, accessToken, tokenType: 'Bearer', expiresIn: ttlSeconds, expiresAt: new Date(exp * 1000).toISOString() };
    },

    /**
     * A valid signature is not enough: the jti must not be revoked and the user must still exist and not be
     * suspended. The role used for authorization is the current one from the database, not the claim.
     */
    async authenticate(token: string): Promise<Caller> {
      let claims;
      try {
        claims = await jwt.verify(token);
      } catch (err) {
        throw new InvalidTokenError((err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'The token has expired' : 'The token is invalid');
      }
      const [revoked, user] = await Promise.all([denyList.isRevoked(claims.jti), users.findById(claims.user_id)]);
      if (revoked) throw new InvalidTokenError('The token has been revoked');
      if (!user) throw new InvalidTokenError('The token belongs to no user');
      if (user.status === 'suspended') throw new InvalidTokenError('The account is suspended');
      return { userId: user.id, role: user.role, status: user.status, jti: claims.jti, exp: claims.exp, apiKey: null };
    },

    /** Revokes a token of the caller's (or anyone's, for an admin). A token already revoked is 404. */
    async revoke(jti: string, caller: Caller): Promise<void> {
      const token = await tokens.findByJti(jti);
      if (!token || token.expires_at <= clock.now()) throw notFound('Token');
      if (token.user_id !== caller.userId && !isAdmin(caller)) throw forbidden('You may revoke only your own tokens');
      if (!(await denyList.revoke(jti, token.expires_at))) throw notFound('Token');
    },

    async purgeExpired(): Promise<number> {
      const now = clock.now();
      return (await tokens.purgeExpired(now)) + (await denyList.purgeExpired(now));
    },
  };
}
