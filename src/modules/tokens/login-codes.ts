import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';
import { AppError, forbidden } from '../../lib/app-error.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/index.js';
import type { Jwt } from './jwt.js';
import type { TokensRepository } from './tokens.repository.js';
import { mintToken, type IssuedToken } from './token-mint.js';

/** How long a login code may wait for its exchange (SPEC §23: 60 s). */
export const LOGIN_CODE_TTL_MS = 60_000;

const digest = (code: string): string => createHash('sha256').update(code).digest('hex');

/** What every refused code gets, whatever the reason: the same 401, so a code's fate is not told. */
const refused = (): AppError =>
  new AppError('INVALID_CREDENTIALS', 'The sign-in code is unknown, used or expired: sign in again', [], {
    'WWW-Authenticate': 'Bearer realm="ferry"',
  });

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

    /** The code's tokens, and the sign-in in the audit log (SPEC §23: method `oidc`), once. */
    async exchange(code: string, ip: string | null = null): Promise<IssuedToken> {
      const row = await db
        .deleteFrom('login_codes')
        .where('code_hash', '=', digest(code))
        .where('expires_at', '>', clock.now())
        .returning('user_id')
        .executeTakeFirst();
      const user = row && (await users.findById(Number(row.user_id)));
      if (!user) throw refused();
      if (user.status === 'suspended') throw forbidden('This account is suspended');
      return mintToken(deps, user, {
        action: 'auth.sign_in',
        actor: { userId: user.id },
        ip,
        target: { type: 'user', id: user.id },
        details: { method: 'oidc' },
        at: clock.now(),
      });
    },

    async purgeExpired(): Promise<number> {
      const res = await db.deleteFrom('login_codes').where('expires_at', '<=', clock.now()).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
