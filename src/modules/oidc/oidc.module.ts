import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Config } from '../../config.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { LoginCodes } from '../tokens/index.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import { createOidcProvider } from './oidc-provider.js';
import { createStateSealer } from './oidc-state.js';
import { createIdentitiesRepository } from './oidc.repository.js';
import { oidcOffRoutes, oidcRoutes } from './oidc.routes.js';
import { createOidcAccounts } from './oidc.service.js';

/** Where the provider sends the browser back; register exactly this at the provider (docs/sign-in.md). */
export const CALLBACK_PATH = '/auth/oidc/callback';

export type OidcConfig = Pick<
  Config,
  | 'oidcIssuer'
  | 'oidcClientId'
  | 'oidcClientSecret'
  | 'oidcScopes'
  | 'oidcUsernameClaim'
  | 'oidcGroupsClaim'
  | 'oidcAdminGroups'
  | 'publicBaseUrl'
  | 'registration'
>;

/**
 * Single sign-on (SPEC §23): GET /auth/oidc/login and /auth/oidc/callback at the root, beside the dashboard. Built
 * for a serving process only; without OIDC_ISSUER both paths answer a 404 page.
 */
export function createOidcModule(deps: {
  config: OidcConfig;
  db: Kysely<Database>;
  dialect: Pick<Dialect, 'isUniqueViolation' | 'uniqueViolationTarget'>;
  users: Pick<UsersRepository, 'findById' | 'findByUsername' | 'findTaken' | 'insert' | 'updateKeepingAnAdmin'>;
  passwords: Pick<PasswordHasher, 'hash'>;
  loginCodes: Pick<LoginCodes, 'create'>;
  jwtSecret: Uint8Array;
  clock: Clock;
}) {
  const { config, clock } = deps;
  if (config.oidcIssuer === null || config.oidcClientId === null)
    return appModule({ schemas: [], rootRoutes: async (scope) => scope.register(oidcOffRoutes) });
  const provider = createOidcProvider(
    {
      issuer: config.oidcIssuer,
      clientId: config.oidcClientId,
      clientSecret: config.oidcClientSecret,
      scopes: config.oidcScopes,
      redirectUri: config.publicBaseUrl + CALLBACK_PATH,
    },
    clock,
  );
  const accounts = createOidcAccounts({
    ...deps,
    identities: createIdentitiesRepository(deps.db),
    rules: {
      registration: config.registration,
      usernameClaim: config.oidcUsernameClaim,
      groupsClaim: config.oidcGroupsClaim,
      adminGroups: config.oidcAdminGroups,
    },
  });
  const sealer = createStateSealer(deps.jwtSecret);
  return appModule({
    schemas: [],
    rootRoutes: async (scope) => {
      await scope.register(oidcRoutes, {
        provider,
        accounts,
        sealer,
        clock,
        secureCookie: config.publicBaseUrl.startsWith('https:'),
      });
    },
  });
}
