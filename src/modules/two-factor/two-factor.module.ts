import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { UsersRepository } from '../users/index.js';
import { createSecretBox } from './totp-secret.js';
import { createTwoFactorRepository } from './two-factor.repository.js';
import { twoFactorRoutes } from './two-factor.routes.js';
import { twoFactorSchemas } from './two-factor.schemas.js';
import { createTwoFactorService } from './two-factor.service.js';

/**
 * Two-factor sign-in (SPEC §23): the service (the tokens module asks it at sign-in, the auth plugin whether an
 * admin has it, the CLI resets it) and the caller's routes. Secrets are sealed under a key derived from the
 * instance's token key.
 */
export function createTwoFactorModule(deps: {
  db: Kysely<Database>;
  users: Pick<UsersRepository, 'findById'>;
  jwtSecret: Uint8Array;
  clock: Clock;
  /** the name authenticator apps show for this instance */
  issuer: string;
}) {
  const twoFactor = createTwoFactorService({
    repository: createTwoFactorRepository(deps.db),
    users: deps.users,
    box: createSecretBox(deps.jwtSecret),
    clock: deps.clock,
    issuer: deps.issuer,
  });
  return appModule({
    twoFactor,
    schemas: twoFactorSchemas,
    apiRoutes: async (api, { version }) => {
      await api.register(twoFactorRoutes, { twoFactor, version });
    },
  });
}
