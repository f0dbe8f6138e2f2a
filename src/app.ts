import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppModule } from './app-module.js';
import { createCoreModules, createLinkModules } from './app-modules.js';
import {
  closeInOrder, ensureFirstAdmin, followLinkChanges, loadBlocklist, scheduleJobs, type JobRunnerOptions,
} from './app-lifecycle.js';
import { fastifyOptions } from './app-options.js';
import type { Config } from './config.js';
import { isEmbedded, type Storage } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import type { RawHandler } from './infra/http-server.js';
import type { JobRunner } from './infra/job-runner.js';
import { connectionLossLogger } from './infra/dependency-faults.js';
import { createStorageHealth, type StorageHealth } from './infra/storage-health.js';
import { createMetrics, type Metrics } from './infra/metrics.js';
import type { Redis } from './infra/redis.js';
import { systemClock, type Clock } from './lib/clock.js';
import { sharedSchemas } from './lib/common.schemas.js';
import type { ReadinessCheck } from './lib/readiness-check.js';
import { dashboardRoutes, defaultWebDir, findWebAssets } from './modules/dashboard/index.js';
import { databaseCheck, healthRoutes, healthSchemas } from './modules/health/index.js';
import type { IdempotencyService } from './modules/idempotency/index.js';
import { createImportsModule, IMPORT_SOURCE_TIMEOUT_MS } from './modules/imports/index.js';
import { loadJwtSecret } from './modules/tokens/index.js';
import authPlugin, { type Authenticators } from './plugins/auth.js';
import conditionalPlugin from './plugins/conditional.js';
import contentTypePlugin from './plugins/content-type.js';
import corsPlugin from './plugins/cors.js';
import errorsPlugin from './plugins/errors.js';
import idempotencyPlugin from './plugins/idempotency.js';
import { createLazyCompilers, type LazyCompilers } from './plugins/lazy-compilers.js';
import methodsPlugin from './plugins/methods.js';
import openapiPlugin from './plugins/openapi.js';
import pathIdsPlugin from './plugins/path-ids.js';
import overloadPlugin from './plugins/overload.js';
import rateLimitPlugin, { createCallerLimit, type RateLimitHook, type RateLimitStore } from './plugins/rate-limit.js';
import passwordHashBudgetPlugin, { type PasswordHashBudgetOptions } from './plugins/password-hash-budget.js';
import requestIdPlugin from './plugins/request-id.js';
import requestMetricsPlugin from './plugins/request-metrics.js';
import { rejectBadTarget } from './plugins/request-target.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import { installValidators } from './plugins/validation.js';
import versioningPlugin, { VERSIONS } from './plugins/versioning.js';
import { createSharedState } from './shared-state.js';

type LinkModules = Awaited<ReturnType<typeof createLinkModules>>;

export interface AppDeps {
  storage: Storage;
  clock?: Clock;
  /** pino options or a logger instance; defaults to pino at config.logLevel */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  /** The scale-out setup's Redis (REDIS_URL): shared deny list, rate limits, link cache, click stream. */
  redis?: Redis | null;
  /** Prefix of every Redis key this app writes (tests isolate themselves with their own). */
  redisPrefix?: string;
  /** rate-limit counters; in-process unless a Redis client is given (scale-out) */
  rateLimitStore?: RateLimitStore;
  /** readiness checks besides the database (scale-out adds `redis`) */
  readinessChecks?: Record<string, ReadinessCheck>;
  metrics?: Metrics;
  /** domain verification's HTTP proof: its port (default 80) and deadline (default 10 s); tests change both */
  domainVerification?: { httpPort?: number; deadlineMs?: number };
  /**
   * PostgreSQL's outbox feed timing (infra/outbox-feed.ts): a test of something else than the feed may
   * trust it longer, so that a loaded machine's late heartbeat does not send its visits to the database
   */
  linkChangeFeed?: { heartbeatMs?: number; trustMs?: number };
  /** the background jobs' lease and heartbeat, and this instance's name among the holders (infra/job-runner.ts) */
  jobRunner?: JobRunnerOptions;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** runs one of the modules' background jobs now, by name */
    runJob(name: string): Promise<unknown>;
    /** the modules' background jobs in their turns among the instances (infra/job-runner.ts) */
    jobs: JobRunner;
    /** Reads BLOCKED_HOSTS_FILE again (server.ts, on SIGHUP); the number of names now blocked. */
    reloadBlockedHosts(): Promise<number>;
  }
}

/**
 * The whole service as one Fastify instance. server.ts and the tests both build it here, with the same
 * options; a test changes behaviour only by passing other dependencies (a database, a clock).
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const { storage } = deps;
  // The redirect's fast path (modules/redirect/redirect-fast-path.ts), set once its routes are registered.
  let redirectFastPath: RawHandler | null = null;
  const compilers = createLazyCompilers();
  const app = Fastify(fastifyOptions({
    config, clock, compilers, fastPath: () => redirectFastPath,
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : {}), ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
  }));

  // First: an unreadable BLOCKED_HOSTS_FILE stops the start before anything is opened (SPEC §17).
  const blockedHosts = await loadBlocklist(app, config);
  // A lost database connection is logged here, once an episode; requests that met it answer 503 (SPEC §17).
  storage.onConnectionError(connectionLossLogger(app.log, 'database'));
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  // Redis or not, decided once: what instances share (shared-state.ts).
  const shared = await createSharedState({
    config, storage, redis: deps.redis ?? null, clock, log: app.log,
    ...(deps.redisPrefix ? { redisPrefix: deps.redisPrefix } : {}), ...(deps.rateLimitStore ? { rateLimitStore: deps.rateLimitStore } : {}),
  });
  const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
  const metrics = deps.metrics ?? createMetrics({ storage, clock });
  // Whether writes can land (SPEC §17): failed writes report here; on the embedded engine DATA_DIR is probed too.
  const storageHealth = createStorageHealth({ dataDir: isEmbedded(storage) ? config.dataDir : null });

  const moduleDeps = { config, storage, shared, clock, jwtSecret, log: app.log };
  const core = createCoreModules(moduleDeps);
  await ensureFirstAdmin(app, config, core);
  const { clickIngest, domainsModule, linksModule, redirectModule, clicksModule } = await createLinkModules({
    ...moduleDeps, core, blockedHosts, metrics,
    ...(deps.domainVerification ? { domainVerification: deps.domainVerification } : {}),
  });
  const importsModule = createImportsModule({
    db: storage.db, dialect: storage.dialect, clock, publicBaseUrl: config.publicBaseUrl,
    writeVisits: clickIngest.writeImported, links: linksModule.linkImports, visitsWritten: () => clicksModule.stats.forgetRemembered(),
    limits: { maxResponseBytes: config.importMaxResponseBytes, timeoutMs: IMPORT_SOURCE_TIMEOUT_MS },
  });
  // In the order their routes are registered and their schemas added; closed in reverse.
  const modules: AppModule[] = [
    core.usersModule, core.tokensModule, core.ordersModule, clickIngest, domainsModule, linksModule, clicksModule, core.apiKeysModule, core.idempotencyModule, core.instanceModule,
    importsModule, core.outboxModule, redirectModule,
  ];
  const cacheBus = await followLinkChanges(app, config, storage, { linksModule, domainsModule, redirectModule }, deps.linkChangeFeed);
  // Read by metrics (depth, dropped) and by tests (flush).
  app.decorate('clickQueue', clickIngest.sink);
  app.decorate('passwordHashing', core.hashLanes);
  metrics.setClickQueueProvider(() => clickIngest.sink.status());

  addSchemas(app, modules, compilers);
  // One budget per caller for the API and the OpenAPI document (plugins/rate-limit.ts).
  const callerLimit = await createCallerLimit(app, {
    perMinute: config.rateLimitPerMinute, verifyToken: core.jwt.verify, store: shared.rateLimitStore,
    apiKeyId: async (request) => (await app.authenticate(request))?.apiKey?.id ?? null,
  });
  await registerRootPlugins(app, {
    config, clock, metrics, storageHealth, callerLimit,
    authenticators: { token: (t) => core.tokensModule.tokens.authenticate(t), apiKey: (k) => core.apiKeysModule.apiKeys.authenticate(k) },
    idempotency: core.idempotencyModule.idempotency,
  });
  await registerApi(app, { config, modules, callerLimit, rateLimitStore: shared.rateLimitStore, hashBudget: { budget: shared.passwordHashBudget, perMinute: config.passwordHashesPerMinute, lanes: core.hashLanes } });
  await registerOutsideApi(app, {
    config, clock, metrics, clickIngest, domainsModule, domainRoot: redirectModule.domainRoot,
    checks: { database: databaseCheck(storage), storage: storageHealth.check, ...shared.readiness, ...deps.readinessChecks },
  });
  for (const m of modules) if (m.rootRoutes) await app.register(m.rootRoutes);
  redirectFastPath = redirectModule.fastPath(app);

  const jobs = scheduleJobs(app, modules, { storage, clock, metrics, options: deps.jobRunner ?? {} });
  blockedHosts.watch();
  closeInOrder(app, { compilers, jobs, modules, shared, cacheBus, blockedHosts });
  return app;
}

/** Every module's schemas (and the shared ones) with their $id: validation, and the OpenAPI components. */
function addSchemas(app: FastifyInstance, modules: AppModule[], compilers: LazyCompilers): void {
  const schemas = [...sharedSchemas, ...healthSchemas, ...modules.flatMap((m) => m.schemas)];
  for (const s of schemas) app.addSchema(s);
  installValidators(app, schemas, compilers);
  app.decorate('compilers', compilers);
}

interface RootPluginDeps {
  config: Config;
  clock: Clock;
  metrics: Metrics;
  storageHealth: Pick<StorageHealth, 'failed'>;
  callerLimit: RateLimitHook;
  authenticators: Authenticators;
  idempotency: IdempotencyService;
}

/** Root: what every response needs, and cheap enough for the redirect's hot path. */
async function registerRootPlugins(app: FastifyInstance, { config, clock, metrics, storageHealth, callerLimit, authenticators, idempotency }: RootPluginDeps): Promise<void> {
  await app.register(errorsPlugin, { clock, onStorageFault: () => storageHealth.failed() });
  await app.register(requestIdPlugin);
  app.addHook('onRequest', rejectBadTarget);
  await app.register(requestMetricsPlugin, { metrics });
  await app.register(overloadPlugin, {
    maxEventLoopDelayMs: config.overloadMaxEventLoopDelayMs,
    maxEventLoopUtilization: config.overloadMaxElu,
    maxHeapUsedBytes: config.overloadMaxHeapBytes,
    sampleIntervalMs: config.overloadSampleIntervalMs,
    maintenanceMode: config.maintenanceMode,
    clock,
    onShed: (reason) => metrics.recordShed(reason),
  });
  await app.register(methodsPlugin, { clock });
  await app.register(openapiPlugin, { publicBaseUrl: config.publicBaseUrl, rateLimit: callerLimit });
  await app.register(authPlugin, { authenticators });
  // Before any route: routes that opt in with config.idempotency are wired as they are added.
  await app.register(idempotencyPlugin, { idempotency });
}

interface ApiDeps {
  config: Config;
  modules: AppModule[];
  callerLimit: RateLimitHook;
  rateLimitStore: RateLimitStore;
  hashBudget: PasswordHashBudgetOptions;
}

/**
 * The JSON API: an encapsulated context with the protections and HTTP semantics of SPEC §1. The redirect and
 * the operational endpoints live in sibling contexts and do not pay for these hooks. Both versions share it:
 * one set of protections (and rate-limit counters), one service layer; a version is a thin mapping at the edge
 * (SPEC §9). Unversioned /api paths were rewritten to one of them (rewriteUrl).
 */
async function registerApi(app: FastifyInstance, { config, modules, callerLimit, rateLimitStore, hashBudget }: ApiDeps): Promise<void> {
  await app.register(async (api) => {
    await api.register(versioningPlugin, { policies: config.apiDeprecation });
    await api.register(corsPlugin, { corsOrigins: config.corsOrigins });
    await api.register(securityHeadersPlugin, { profile: 'api', publicBaseUrl: config.publicBaseUrl });
    await api.register(rateLimitPlugin, { perCaller: callerLimit, tokenPerMinute: config.tokenRateLimitPerMinute, store: rateLimitStore });
    await api.register(passwordHashBudgetPlugin, hashBudget);
    await api.register(contentTypePlugin);
    await api.register(conditionalPlugin);
    await api.register(pathIdsPlugin);
    for (const version of VERSIONS) {
      const basePath = `/api/v${version}`;
      await api.register(async (v) => {
        for (const m of modules) if (m.apiRoutes) await v.register(m.apiRoutes, { basePath, version });
      }, { prefix: `/v${version}` });
    }
  }, { prefix: '/api' });
}

/** What stands at the root beside the API, outside its hooks and limits. */
async function registerOutsideApi(app: FastifyInstance, { config, clock, metrics, clickIngest, domainsModule, domainRoot, checks }: {
  config: Config;
  clock: Clock;
  metrics: Metrics;
  clickIngest: LinkModules['clickIngest'];
  domainsModule: LinkModules['domainsModule'];
  /** what GET / means on a host (the redirect module's visit policy decides) */
  domainRoot: (host: string) => string | null | undefined;
  checks: Record<string, ReadinessCheck>;
}): Promise<void> {
  // Health, readiness and metrics.
  await app.register(healthRoutes, {
    checks, metrics, clickStream: () => clickIngest.sink.status().stream, metricsToken: config.metricsToken,
    clickJournalDegraded: () => clickIngest.sink.status().journalDegraded === true,
  });
  // Domains' HTTP proof and TLS `ask` (SPEC §19).
  await app.register(domainsModule.publicRoutes);
  await registerDashboard(app, config, clock, domainRoot);
}

/** The dashboard (SPEC §16): GET /, /app and its assets, with their own CSP; not the API, not in the document. */
async function registerDashboard(app: FastifyInstance, config: Config, clock: Clock, domainRoot: (host: string) => string | null | undefined): Promise<void> {
  const webDir = config.webDir ?? defaultWebDir();
  const webAssets = findWebAssets(webDir);
  if (!webAssets) app.log.warn({ webDir }, 'the dashboard is not built (no index.html and assets/ there): /app answers 503 until `npm run build`');
  await app.register(dashboardRoutes, { assets: webAssets, publicBaseUrl: config.publicBaseUrl, clock, domainRoot });
}
