import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import type { Jwt } from './jwt.js';
import { createLoginCodes } from './login-codes.js';
import { createTokensRepository, type TokenDenyList } from './tokens.repository.js';
import { tokensRoutes } from './tokens.routes.js';
import { tokenSchemas } from './tokens.schemas.js';
import { createTokensService, type SecondFactor } from './tokens.service.js';

const PURGE_EVERY_MS = 10 * 60_000;

/** Sign-in and revocation: the service (the auth plugin authenticates through it), the routes, the purge job. */
export function createTokensModule(deps: {
  db: Kysely<Database>;
  users: Pick<UsersRepository, 'findById' | 'findByUsername' | 'setPasswordHash'>;
  passwords: Pick<PasswordHasher, 'verify' | 'decoy' | 'hash' | 'isOutdated'>;
  denyList: TokenDenyList;
  jwt: Jwt;
  clock: Clock;
  ttlSeconds: number;
  secondFactor?: SecondFactor;
  passwordLogin?: boolean;
}) {
  const repository = createTokensRepository(deps.db);
  const tokens = createTokensService({ ...deps, tokens: repository });
  // Single sign-on's last step (SPEC §23): the oidc module makes the codes, POST /tokens exchanges them.
  const loginCodes = createLoginCodes({ ...deps, tokens: repository });
  return appModule({
    tokens,
    loginCodes,
    schemas: tokenSchemas,
    apiRoutes: async (api, { basePath }) => {
      await api.register(tokensRoutes, { tokens, loginCodes, basePath });
    },
    jobs: [
      { name: 'purge-expired-tokens', everyMs: PURGE_EVERY_MS, run: () => tokens.purgeExpired() },
      { name: 'purge-expired-login-codes', everyMs: PURGE_EVERY_MS, run: () => loginCodes.purgeExpired() },
    ],
  });
}
