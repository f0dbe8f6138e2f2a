/**
 * The modules every process builds first (app-modules.ts createModules): accounts, tokens, API keys, orders,
 * idempotency, the instance and the outbox's upkeep, and what every module is built from.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Storage } from './db/database.js';
import type { Clock } from './lib/clock.js';
import { deploymentPaginator } from './lib/pagination.js';
import { createHashLanes } from './infra/hash-lanes.js';
import { createApiKeysModule } from './modules/api-keys/index.js';
import { createIdempotencyModule } from './modules/idempotency/index.js';
import { createInstanceModule } from './modules/instance/index.js';
import { createOrdersModule } from './modules/orders/index.js';
import { createOutboxModule } from './modules/outbox/index.js';
import { createJwt, createTokensModule } from './modules/tokens/index.js';
import { createUsersModule } from './modules/users/index.js';
import type { SharedState } from './shared-state.js';

export interface ModuleDeps {
  config: Config;
  storage: Storage;
  shared: SharedState;
  clock: Clock;
  jwtSecret: Uint8Array;
  log: FastifyBaseLogger;
}

/** Accounts, tokens, API keys, orders, idempotency and the outbox's upkeep: what the links and clicks are built on. */
export function createCoreModules({ config, storage, shared, clock, jwtSecret, log }: ModuleDeps) {
  const paginator = deploymentPaginator(jwtSecret);
  const jwt = createJwt(jwtSecret, clock);
  // Every password hash of the process through one bounded, fair queue (SPEC §17).
  const hashLanes = createHashLanes();
  const usersModule = createUsersModule({
    db: storage.db,
    dialect: storage.dialect,
    paginator,
    clock,
    passwordHashCost: config.passwordHashCost,
    hashLanes,
    registration: config.registration,
  });
  const { repository: usersRepo, passwords } = usersModule;
  const tokensModule = createTokensModule({
    db: storage.db,
    users: usersRepo,
    passwords,
    denyList: shared.denyList,
    jwt,
    clock,
    ttlSeconds: config.tokenTtlSeconds,
  });
  const apiKeysModule = createApiKeysModule({
    db: storage.db,
    dialect: storage.dialect,
    users: usersRepo,
    jwtSecret,
    clock,
    paginator,
    log,
  });
  const ordersModule = createOrdersModule({ db: storage.db, users: usersRepo, clock, paginator });
  const idempotencyModule = createIdempotencyModule({
    db: storage.db,
    clock,
    ttlSeconds: config.idempotencyTtlSeconds,
    lockTimeoutMs: config.idempotencyLockTimeoutMs,
  });
  const instanceModule = createInstanceModule({ config, users: usersRepo, db: storage.db, clock });
  const outboxModule = createOutboxModule({ db: storage.db, clock });
  return {
    paginator,
    jwt,
    hashLanes,
    usersModule,
    tokensModule,
    apiKeysModule,
    ordersModule,
    idempotencyModule,
    instanceModule,
    outboxModule,
  };
}
