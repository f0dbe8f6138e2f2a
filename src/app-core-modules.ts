/**
 * The modules every process builds first (app-modules.ts createModules): accounts, tokens, API keys, orders,
 * idempotency, the instance and the outbox's upkeep, and what every module is built from.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { fastStatements, type Storage } from './db/database.js';
import type { Clock } from './lib/clock.js';
import { deploymentPaginator } from './lib/pagination.js';
import { createHashLanes } from './infra/hash-lanes.js';
import { createApiKeysModule } from './modules/api-keys/index.js';
import { createAuditModule } from './modules/audit/index.js';
import { createIdempotencyModule } from './modules/idempotency/index.js';
import { createInstanceModule } from './modules/instance/index.js';
import { createOrdersModule } from './modules/orders/index.js';
import { createOutboxModule } from './modules/outbox/index.js';
import { createJwt, createTokensModule } from './modules/tokens/index.js';
import { createTwoFactorModule } from './modules/two-factor/index.js';
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

/**
 * Accounts, two-factor sign-in, tokens, API keys, orders, idempotency, the outbox's upkeep and the audit log:
 * what the links and clicks are built on.
 */
export function createCoreModules({ config, storage, shared, clock, jwtSecret, log }: ModuleDeps) {
  const paginator = deploymentPaginator(jwtSecret);
  const jwt = createJwt(jwtSecret, clock);
  // Every password hash of the process through one bounded, fair queue (SPEC §17).
  const hashLanes = createHashLanes();
  const usersModule = createUsersModule({
    db: storage.db,
    dialect: storage.dialect,
    fast: fastStatements(storage),
    paginator,
    clock,
    passwordHashCost: config.passwordHashCost,
    hashLanes,
    registration: config.registration,
  });
  const { repository: usersRepo } = usersModule;
  const { twoFactorModule, tokensModule } = createSignInModules(
    { config, storage, shared, clock, jwtSecret },
    usersModule,
    jwt,
  );
  const apiKeysModule = createApiKeysModule({
    db: storage.db,
    dialect: storage.dialect,
    fast: fastStatements(storage),
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
  const auditModule = createAuditModule({
    db: storage.db,
    clock,
    paginator,
    retentionDays: config.auditRetentionDays,
  });
  return {
    paginator,
    jwt,
    hashLanes,
    usersModule,
    twoFactorModule,
    tokensModule,
    apiKeysModule,
    ordersModule,
    idempotencyModule,
    instanceModule,
    outboxModule,
    auditModule,
  };
}

/** Two-factor sign-in and the tokens module it is the second step of (SPEC §4, §23). */
function createSignInModules(
  { config, storage, shared, clock, jwtSecret }: Omit<ModuleDeps, 'log'>,
  { repository: usersRepo, passwords }: ReturnType<typeof createUsersModule>,
  jwt: ReturnType<typeof createJwt>,
) {
  const twoFactorModule = createTwoFactorModule({
    db: storage.db,
    users: usersRepo,
    jwtSecret,
    clock,
    issuer: `Ferry (${new URL(config.publicBaseUrl).host})`,
  });
  const tokensModule = createTokensModule({
    db: storage.db,
    users: usersRepo,
    passwords,
    denyList: shared.denyList,
    jwt,
    clock,
    ttlSeconds: config.tokenTtlSeconds,
    secondFactor: twoFactorModule.twoFactor,
    passwordLogin: config.passwordLogin,
  });
  return { twoFactorModule, tokensModule };
}
