/**
 * The modules (src/app-module.ts), each built once from what it needs; app.ts lists them and wires them all by
 * the same loops. A new module is built here (or in a function of its own beside these) and added to that list.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { isEmbedded, type Storage } from './db/database.js';
import type { Clock } from './lib/clock.js';
import { deploymentPaginator } from './lib/pagination.js';
import { createApiKeysModule } from './modules/api-keys/index.js';
import {
  createAddressRecorder, createClickIngest, createClicksModule, createCountryLookup, openGeoipDatabase, visitorSalt,
  type ClickSink,
} from './modules/clicks/index.js';
import { createIdempotencyModule } from './modules/idempotency/index.js';
import { createInstanceModule } from './modules/instance/index.js';
import { createLinksModule } from './modules/links/index.js';
import type { Metrics } from './infra/metrics.js';
import { createRedirectModule } from './modules/redirect/index.js';
import type { HostBlocklist } from './lib/host-blocklist.js';
import { createDomainsModule, type DomainDirectory } from './modules/domains/index.js';
import { randomBytes } from 'node:crypto';
import { createHashLanes } from './infra/hash-lanes.js';
import { createOrdersModule } from './modules/orders/index.js';
import { createOutboxModule } from './modules/outbox/index.js';
import { createJwt, createTokensModule } from './modules/tokens/index.js';
import { createUsersModule, type PasswordHasher } from './modules/users/index.js';
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
  /** the fast path's request metrics */
  metrics: Pick<Metrics, 'observeFastRedirect'>;
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

/** What the redirect module is built from besides the modules' common dependencies. */
interface RedirectWiring {
  sink: ClickSink;
  /** the domains module's directory: the domain a visit's host names */
  domains: DomainDirectory;
  passwords: Pick<PasswordHasher, 'verify'>;
  /** an opened GEOIP_DATABASE, or null */
  geoip: Parameters<typeof createCountryLookup>[0]['geoip'];
  metrics: Pick<Metrics, 'observeFastRedirect'>;
}

/**
 * The visit (modules/redirect): its routes, fast path, link cache and visit policy, and what a visit tells
 * besides the request (SPEC §15): the country, and IP_ANONYMIZE's shortening and hash of the address.
 */
export function createRedirectModuleFor(deps: ModuleDeps & RedirectWiring) {
  const { config, storage, shared, clock, jwtSecret } = deps;
  return createRedirectModule({
    config, storage, clock, domains: deps.domains, clicks: deps.sink, passwords: deps.passwords,
    passwordAttempts: shared.passwordAttempts, passwordHashBudget: shared.passwordHashBudget,
    country: createCountryLookup({ countryHeader: config.countryHeader, geoip: deps.geoip }),
    recordAddress: createAddressRecorder({ anonymize: config.ipAnonymize, salt: visitorSalt(jwtSecret) }),
    // The embedded database is one process's file: no other instance changes links behind the cache's back.
    soleWriter: isEmbedded(storage),
    limiter: shared.redirectLimiter,
    metrics: deps.metrics,
  });
}

/**
 * Domains, links and their clicks, and the visit: how clicks travel (the clicks module's choice), the four
 * modules. The redirect is built before links: its cache is the links module's VisitCache.
 */
export async function createLinkModules(deps: LinkModuleDeps) {
  const { config, storage, shared, clock, log, core, blockedHosts } = deps;
  const { paginator, usersModule: { repository: usersRepo, passwords } } = core;
  // Read before anything below starts threads or files: a GEOIP_DATABASE that is not a database stops the start-up
  // with nothing left running (the click ingest's writer thread and journal are never closed by a failed start).
  const geoip = await openGeoipDatabase(config.geoipDatabase);
  // This instance's name in the outbox's events of links and domains (db/outbox.ts, infra/outbox-feed.ts).
  const changeOrigin = randomBytes(8).toString('hex');
  const domainsModule = await domainsModuleFor(deps, changeOrigin);
  const clickIngest = await createClickIngest({
    config, storage, log, clock,
    redis: shared.redis && shared.redirectTurn ? { client: shared.redis, turn: shared.redirectTurn, prefix: shared.redisPrefix } : null,
  });
  const redirectModule = createRedirectModuleFor({
    ...deps, sink: clickIngest.sink, domains: domainsModule.directory, passwords, geoip, metrics: deps.metrics,
  });
  const linksModule = createLinksModule({
    config, storage, users: usersRepo, paginator, clock, passwords, blockedHosts, changeOrigin,
    cache: redirectModule.cache, domains: domainsModule.directory,
  });
  const clicksModule = createClicksModule({
    storage, links: linksModule.links, users: usersRepo, paginator, clock, retentionMonths: config.clickRetentionMonths, log,
  });
  return { clickIngest, domainsModule, linksModule, redirectModule, clicksModule };
}
