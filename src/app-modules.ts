/**
 * The modules (src/app-module.ts), each built once from what it needs; app.ts lists them and wires them all by
 * the same loops. A new module is built here (or in a function of its own beside these) and added to that list.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { isEmbedded, type Storage } from './db/database.js';
import { warnWithoutSearchIndex } from './db/link-search.js';
import type { Clock } from './lib/clock.js';
import { deploymentPaginator } from './lib/pagination.js';
import { createApiKeysModule } from './modules/api-keys/index.js';
import { createClickIngest, createClicksModule, createVisitContext, openGeoipDatabase, visitorSalt } from './modules/clicks/index.js';
import { createIdempotencyModule } from './modules/idempotency/index.js';
import { createInstanceModule } from './modules/instance/index.js';
import { createLinksModule } from './modules/links/index.js';
import type { HostBlocklist } from './lib/host-blocklist.js';
import { createDomainsModule } from './modules/domains/index.js';
import { randomBytes } from 'node:crypto';
import { createHashLanes } from './infra/hash-lanes.js';
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
  const usersModule = createUsersModule({ db: storage.db, dialect: storage.dialect, paginator, clock, passwordHashCost: config.passwordHashCost, hashLanes, registration: config.registration });
  const { repository: usersRepo, passwords } = usersModule;
  const tokensModule = createTokensModule({ db: storage.db, users: usersRepo, passwords, denyList: shared.denyList, jwt, clock, ttlSeconds: config.tokenTtlSeconds });
  const apiKeysModule = createApiKeysModule({
    db: storage.db, dialect: storage.dialect, users: usersRepo, jwtSecret, clock, paginator, log,
  });
  const ordersModule = createOrdersModule({ db: storage.db, users: usersRepo, clock, paginator });
  const idempotencyModule = createIdempotencyModule({ db: storage.db, clock, ttlSeconds: config.idempotencyTtlSeconds, lockTimeoutMs: config.idempotencyLockTimeoutMs });
  const instanceModule = createInstanceModule({ config, users: usersRepo });
  const outboxModule = createOutboxModule({ db: storage.db, clock });
  return {
    paginator, jwt, hashLanes, usersModule, tokensModule, apiKeysModule, ordersModule, idempotencyModule,
    instanceModule, outboxModule,
  };
}

export interface LinkModuleDeps extends ModuleDeps {
  core: Pick<ReturnType<typeof createCoreModules>, 'paginator' | 'usersModule'>;
  /** BLOCKED_HOSTS_FILE's list, read before anything else starts: link targets and domain fallbacks are checked against it */
  blockedHosts: HostBlocklist;
  /** domain verification's HTTP proof: its port (default 80) and deadline (default 10 s); tests change both */
  domainVerification?: { httpPort?: number; deadlineMs?: number };
}

/** The domains module, announcing its changes under this instance's `changeOrigin`. */
function domainsModuleFor(deps: LinkModuleDeps, changeOrigin: string) {
  const { config, storage, clock, log, core, blockedHosts, domainVerification } = deps;
  return createDomainsModule({
    db: storage.db, dialect: storage.dialect, users: core.usersModule.repository, clock, paginator: core.paginator, changeOrigin, blockedHosts,
    defaultHost: new URL(config.publicBaseUrl).hostname.toLowerCase(),
    verification: { dnsServers: config.dnsServers, allowPrivate: config.domainVerifyAllowPrivate, log, ...domainVerification },
  });
}

/**
 * Domains, links and their clicks: how clicks travel (the clicks module's choice), what a visit tells, the
 * three modules.
 */
export async function createLinkModules(deps: LinkModuleDeps) {
  const { config, storage, shared, clock, jwtSecret, log, core, blockedHosts } = deps;
  const { paginator, usersModule: { repository: usersRepo, passwords } } = core;
  // Read before anything below starts threads or files: a GEOIP_DATABASE that is not a database stops the start-up
  // with nothing left running (the click ingest's writer thread and journal are never closed by a failed start).
  const geoip = await openGeoipDatabase(config.geoipDatabase);
  // This instance's name in the outbox's events of links and domains (db/outbox.ts, infra/outbox-feed.ts).
  const changeOrigin = randomBytes(8).toString('hex');
  // PostgreSQL without pg_trgm: the link search scans (db/link-search.ts); said once a start.
  await warnWithoutSearchIndex(storage, (msg) => log.warn(msg));
  const domainsModule = await domainsModuleFor(deps, changeOrigin);
  const clickIngest = await createClickIngest({
    config, storage, log, clock,
    redis: shared.redis && shared.redirectTurn ? { client: shared.redis, turn: shared.redirectTurn, prefix: shared.redisPrefix } : null,
  });
  // What a click learns besides the request (SPEC §15): the country, and IP_ANONYMIZE's shortening and hash.
  const describeVisit = createVisitContext({
    countryHeader: config.countryHeader,
    geoip,
    anonymize: config.ipAnonymize,
    salt: visitorSalt(jwtSecret),
  });
  const linksModule = createLinksModule({
    config, storage, users: usersRepo, paginator, clock, passwords, clicks: clickIngest.sink, describeVisit,
    passwordAttempts: shared.passwordAttempts, passwordHashBudget: shared.passwordHashBudget,
    blockedHosts,
    // The embedded database is one process's file: no other instance changes links behind the cache's back.
    soleWriter: isEmbedded(storage),
    changeOrigin,
    domains: domainsModule.directory,
  });
  const clicksModule = createClicksModule({
    storage, links: linksModule.links, users: usersRepo, paginator, clock, retentionMonths: config.clickRetentionMonths, log,
  });
  return { clickIngest, domainsModule, linksModule, clicksModule };
}
