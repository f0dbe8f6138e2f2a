import { AppError, forbidden, InvalidTokenError, notFound } from '../../lib/app-error.js';
import { isAdmin, type Caller } from '../../lib/caller.js';
import type { Clock } from '../../lib/clock.js';
import { mintToken, type IssuedToken } from './token-mint.js';
import { issuedBeforeLastChange } from './token-generation.js';
import type { AuditEntry } from '../../db/audit-log.js';
import type { UsersRepository, PasswordHasher } from '../users/index.js';
import type { Jwt } from './jwt.js';
import type { TokenDenyList, TokensRepository } from './tokens.repository.js';

export type { IssuedToken } from './token-mint.js';

export { InvalidTokenError };

export type TokensService = ReturnType<typeof createTokensService>;

/**
 * A sign-in's second step (modules/two-factor, handed over by the wiring): 'off' (none), 'missing' (no code
 * sent), the factor a right code used (it is used up), or null for a wrong or used code.
 */
export interface SecondFactor {
  checkSignIn(userId: number, code: string | undefined): Promise<'off' | 'missing' | 'totp' | 'recovery_code' | null>;
}

/** What a password sign-in brings besides the password: the second factor's code, the client's address. */
export interface SignInContext {
  totpCode?: string | undefined;
  ip?: string | null;
}

export interface TokensServiceDeps {
  users: Pick<UsersRepository, 'findById' | 'findByUsername' | 'setPasswordHash'>;
  tokens: TokensRepository;
  passwords: Pick<PasswordHasher, 'verify' | 'decoy' | 'hash' | 'isOutdated'>;
  denyList: TokenDenyList;
  jwt: Jwt;
  clock: Clock;
  ttlSeconds: number;
  /** SPEC §23's second factor; absent: none */
  secondFactor?: SecondFactor;
  /** PASSWORD_LOGIN (default true) */
  passwordLogin?: boolean;
}

export function createTokensService(deps: TokensServiceDeps) {
  const { users, tokens, denyList, jwt, clock } = deps;

  return {
    issue: (username: string, password: string, context: SignInContext = {}): Promise<IssuedToken> =>
      issueToken(deps, username, password, context),

    /** A token for a user another way signed in (SPEC §23's single sign-on), with that sign-in's audit entry. */
    issueFor: (
      user: { id: number; role: 'user' | 'admin'; token_generation: number },
      audit: AuditEntry,
    ): Promise<IssuedToken> => signTokenFor(deps, user, audit),

    /**
     * A valid signature is not enough: the jti must not be revoked and the user must still exist and not be
     * suspended. The role used for authorization is the current one from the database, not the claim.
     */
    async authenticate(token: string): Promise<Caller> {
      let claims;
      try {
        claims = await jwt.verify(token);
      } catch (err) {
        throw new InvalidTokenError(
          (err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'The token has expired' : 'The token is invalid',
        );
      }
      const [revoked, user] = await Promise.all([denyList.isRevoked(claims.jti), users.findById(claims.user_id)]);
      if (revoked) throw new InvalidTokenError('The token has been revoked');
      if (!user) throw new InvalidTokenError('The token belongs to no user');
      if (user.status === 'suspended') throw new InvalidTokenError('The account is suspended');
      if (issuedBeforeLastChange(claims, user))
        throw new InvalidTokenError('The token was issued before a change of password, role or status');
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

/**
 * Checks the password against the user's hash, or against a decoy hash when there is no such user, so both
 * failures cost one scrypt at the current cost and answer the same 401. A hash made at another cost
 * (PASSWORD_HASH_COST changed since) is checked alongside the decoy, so that it takes about as long too
 * (SPEC §12), and a successful login rehashes it at the current cost.
 */
async function issueToken(
  deps: TokensServiceDeps,
  username: string,
  password: string,
  context: SignInContext,
): Promise<IssuedToken> {
  const { users, tokens, passwords, clock } = deps;
  if (deps.passwordLogin === false)
    throw new AppError('PASSWORD_LOGIN_DISABLED', 'Signing in with a password is turned off on this instance');
  const user = await users.findByUsername(username);
  const decoy = await passwords.decoy();
  const outdated = user !== undefined && passwords.isOutdated(user.password_hash);
  const [ok] = await Promise.all([
    passwords.verify(password, user?.password_hash ?? decoy),
    outdated ? passwords.verify(password, decoy) : null,
  ]);
  const failed = (reason: string, target = user): Promise<void> =>
    tokens.recordSignIn({
      action: 'auth.sign_in_failed',
      actor: null,
      ip: context.ip ?? null,
      target: target ? { type: 'user', id: target.id } : null,
      details: { method: 'password', reason },
      at: clock.now(),
    });
  if (!user || !ok) {
    await failed(user ? 'password' : 'unknown_user');
    throw new AppError('UNAUTHENTICATED', 'Invalid username or password', [], { 'WWW-Authenticate': REALM });
  }
  if (user.status === 'suspended') throw forbidden('This account is suspended');
  // The second factor after the password (SPEC §23): the attempt's one scrypt is the password's (SPEC §17); a
  // code is checked only for the right password, and a wrong one fails the sign-in as a wrong password does.
  const second = deps.secondFactor ? await deps.secondFactor.checkSignIn(user.id, context.totpCode) : 'off';
  if (second === 'missing')
    throw new AppError('TOTP_REQUIRED', 'This account signs in with a second factor: send totp_code', [], {
      'WWW-Authenticate': REALM,
    });
  if (second === null) {
    await failed('totp');
    throw new AppError('INVALID_CREDENTIALS', 'Invalid username, password or code', [], { 'WWW-Authenticate': REALM });
  }
  if (outdated) await users.setPasswordHash(user.id, user.password_hash, await passwords.hash(password));
  return signTokenFor(deps, user, {
    action: 'auth.sign_in',
    actor: { userId: user.id },
    ip: context.ip ?? null,
    target: { type: 'user', id: user.id },
    details: { method: 'password', second_factor: second === 'off' ? null : second },
    at: clock.now(),
  });
}

const REALM = 'Bearer realm="ferry"';

/** A token for this user, its row and the sign-in's audit entry written together. */
const signTokenFor = (
  deps: Pick<TokensServiceDeps, 'tokens' | 'jwt' | 'clock' | 'ttlSeconds'>,
  user: { id: number; role: 'user' | 'admin'; token_generation: number },
  audit: AuditEntry,
): Promise<IssuedToken> => mintToken(deps, user, audit);
