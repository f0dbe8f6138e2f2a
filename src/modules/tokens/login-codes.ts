import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, UserRow } from '../../db/types.js';
import { AppError, forbidden } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/index.js';
import type { Jwt } from './jwt.js';
import type { TokensRepository } from './tokens.repository.js';
import type { IssuedToken } from './tokens.service.js';

/** How long a login code may wait for its exchange (SPEC §23: 60 s). */
export const LOGIN_CODE_TTL_MS = 60_000;

const digest = (code: string): string => createHash('sha256').update(code).digest('hex');

/** What every refused code gets, whatever the reason: the same 401, so a code's fate is not told. */
const refused = (): AppError =>
  new AppError('INVALID_CREDENTIALS', 'The sign-in code is unknown, used or expired: sign in again', [], {
    'WWW-Authenticate': 'Bearer realm="ferry"',
  });

/**
 * A token for an account that has just proven who it is (SPEC §4's token). It is never dated before the
 * account's `tokens_valid_after` (a role change at this sign-in moved it), or it would be refused at once.
 */
export async function mintToken(
  deps: { tokens: Pick<TokensRepository, 'insert'>; jwt: Jwt; clock: Clock; ttlSeconds: number },
  user: Pick<UserRow, 'id' | 'role' | 'tokens_valid_after'>,
): Promise<IssuedToken> {
  const { tokens, jwt, clock, ttlSeconds } = deps;
  const iat = Math.max(Math.floor(clock.now() / 1000), Math.ceil(Number(user.tokens_valid_after) / 1000));
  const exp = iat + ttlSeconds;
  const jti = randomBytes(16).toString('base64url');
  await tokens.insert({ jti, user_id: user.id, issued_at: iat * 1000, expires_at: exp * 1000 });
  const accessToken = await jwt.sign({ user_id: user.id, role: user.role, jti, iat, exp });
  return {
    jti,
    accessToken,
    tokenType: 'Bearer',
    expiresIn: ttlSeconds,
    expiresAt: new Date(exp * 1000).toISOString(),
  };
}

export type LoginCodes = ReturnType<typeof createLoginCodes>;

/**
 * The single-use codes single sign-on ends with (SPEC §23): the callback makes one for the account and sends the
 * browser to `/app/?login_code=<code>`; the dashboard exchanges it at POST /tokens. A code is 256 random bits
 * and kept only as its SHA-256. The exchange deletes the row it uses in one statement (DELETE … RETURNING), so of
 * two exchanges of one code, however close, exactly one gets the row and the other a 401.
 */
export function createLoginCodes(deps: {
  db: Kysely<Database>;
  users: Pick<UsersRepository, 'findById'>;
  tokens: Pick<TokensRepository, 'insert'>;
  jwt: Jwt;
  clock: Clock;
  ttlSeconds: number;
}) {
  const { db, users, clock } = deps;
  return {
    async create(userId: number): Promise<string> {
      const code = randomBytes(32).toString('base64url');
      await db
        .insertInto('login_codes')
        .values({ code_hash: digest(code), user_id: userId, expires_at: clock.now() + LOGIN_CODE_TTL_MS })
        .execute();
      return code;
    },

    async exchange(code: string): Promise<IssuedToken> {
      const row = await db
        .deleteFrom('login_codes')
        .where('code_hash', '=', digest(code))
        .where('expires_at', '>', clock.now())
        .returning('user_id')
        .executeTakeFirst();
      const user = row && (await users.findById(Number(row.user_id)));
      if (!user) throw refused();
      if (user.status === 'suspended') throw forbidden('This account is suspended');
      return mintToken(deps, user);
    },

    async purgeExpired(): Promise<number> {
      const res = await db.deleteFrom('login_codes').where('expires_at', '<=', clock.now()).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
