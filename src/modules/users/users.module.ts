import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Registration } from '../../config.js';
import type { FastStatements } from '../../db/database.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { HashLanes } from '../../infra/hash-lanes.js';
import { createPasswordHasher } from './password.js';
import { createUsersRepository } from './users.repository.js';
import { usersRoutes } from './users.routes.js';
import { userSchemas } from './users.schemas.js';
import { createUsersService } from './users.service.js';

/** Accounts: the repository and password hasher other modules are built with, the service, the routes. */
export function createUsersModule(deps: {
  db: Kysely<Database>;
  dialect: Dialect;
  /** the embedded engine's prepared statements (db/database.ts); null or absent: Kysely only */
  fast?: FastStatements | null;
  paginator: Paginator;
  clock: Clock;
  passwordHashCost: number;
  hashLanes?: HashLanes;
  registration?: Registration;
}) {
  const repository = createUsersRepository(deps.db, deps.paginator, deps.dialect, deps.fast ?? null);
  const passwords = createPasswordHasher(deps.passwordHashCost, deps.hashLanes);
  const users = createUsersService({
    users: repository,
    passwords,
    dialect: deps.dialect,
    clock: deps.clock,
    paginator: deps.paginator,
    ...(deps.registration ? { registration: deps.registration } : {}),
  });
  return appModule({
    repository,
    passwords,
    users,
    schemas: userSchemas,
    apiRoutes: async (api, { basePath, version }) => {
      await api.register(usersRoutes, { users, basePath, version });
    },
  });
}
