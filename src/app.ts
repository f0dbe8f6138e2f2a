import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import Fastify, { LogController, type FastifyHttpOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import { isEmbedded, type Storage } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { serverWithFastPath, type RawHandler } from './infra/http-server.js';
import { createClientErrorHandler } from './infra/client-errors.js';
import { createMetrics, type Metrics } from './infra/metrics.js';
import { createScheduler } from './infra/scheduler.js';
import { systemClock, type Clock } from './lib/clock.js';
import { sharedSchemas } from './lib/common.schemas.js';
import { Paginator } from './lib/pagination.js';
import { createApiKeysModule } from './modules/api-keys/api-keys.module.js';
import { createIdempotencyModule } from './modules/idempotency/index.js';
import { createOrdersModule } from './modules/orders/orders.module.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { healthSchemas } from './modules/health/health.schemas.js';
import { databaseCheck, type ReadinessCheck } from './modules/health/readiness.js';
import {
  createClickPipeline, createClicksModule, createVisitContext, openGeoipDatabase, visitorSalt, type ClickQueue,
} from './modules/clicks/index.js';
import { createLinksModule } from './modules/links/index.js';
import { dashboardRoutes } from './modules/dashboard/dashboard.routes.js';
import { defaultWebDir, findWebAssets } from './modules/dashboard/web-assets.js';
import { createJwt } from './modules/tokens/jwt.js';
import { loadJwtSecret } from './modules/tokens/secret.js';
import { createTokensModule } from './modules/tokens/tokens.module.js';
import { createUsersModule } from './modules/users/index.js';
import type { AppModule } from './app-module.js';
import type { Redis } from './infra/redis.js';
import { createPgLinkCacheBus } from './infra/pg-link-cache-bus.js';
import authPlugin from './plugins/auth.js';
import conditionalPlugin from './plugins/conditional.js';
import contentTypePlugin from './plugins/content-type.js';
import errorsPlugin, { sendAppError, toAppError } from './plugins/errors.js';
import idempotencyPlugin from './plugins/idempotency.js';
import corsPlugin from './plugins/cors.js';
import methodsPlugin from './plugins/methods.js';
import openapiPlugin from './plugins/openapi.js';
import overloadPlugin from './plugins/overload.js';
import rateLimitPlugin, { type RateLimitStore } from './plugins/rate-limit.js';
import { registerRedirectRateLimit } from './plugins/redirect-limit.js';
import requestMetricsPlugin from './plugins/request-metrics.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import requestIdPlugin, { requestIdFrom } from './plugins/request-id.js';
import { installValidators } from './plugins/validation.js';
import { createLazyCompilers } from './plugins/lazy-compilers.js';
import { createSharedState } from './shared-state.js';
import versioningPlugin, { rewriteVersionedUrl, VERSIONS } from './plugins/versioning.js';
import { badTargetError, rejectBadTarget } from './plugins/request-target.js';

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
  /** the click queue (default: in-process, bounded, flushed to this database) */
  clickQueue?: ClickQueue;
}

/**
 * The whole service as one Fastify instance. server.ts and the tests both build it here, with the same
 * options; a test changes behaviour only by passing other dependencies (a database, a clock).
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const { storage } = deps;

  // The redirect's fast path (modules/links/redirect-fast-path.ts), set once its route and limiter exist.
  let redirectFastPath: RawHandler | null = null;
  const compilers = createLazyCompilers();
  const options: FastifyHttpOptions<Server> = {
    schemaController: { compilersFactory: { buildSerializer: compilers.serializerFactory } },
    serverFactory: serverWithFastPath(() => redirectFastPath) as FastifyHttpOptions<Server>['serverFactory'],
    ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : { logger: deps.logger ?? { level: config.logLevel } }),
    bodyLimit: config.bodyLimitBytes,
    // A hop count is accepted by Fastify (proxy-addr) although its types omit it.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    genReqId: requestIdFrom,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      // A route may opt out of the per-request lines with `config: { accessLog: false }` (the redirect does).
      disableRequestLogging: (req: object) => (req as { routeOptions?: { config?: { accessLog?: boolean } } }).routeOptions?.config?.accessLog === false,
    }),
    // Slow-loris protection: headers must arrive within HEADERS_TIMEOUT_MS (10 s) and the whole request within
    // REQUEST_TIMEOUT_MS (30 s), checked every few seconds (Node's default check runs every 30 s); a socket
    // with no traffic for 60 s is closed; idle keep-alive sockets close after 5 s.
    http: { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: Math.min(5_000, config.headersTimeoutMs) },
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 5_000,
    connectionTimeout: 60_000,
    // While closing, requests that still arrive on open connections are served (with Connection: close) rather
    // than answered by Fastify's own 503, whose body is not the error envelope; server.ts bounds the drain.
    return503OnClosing: false,
    routerOptions: { maxParamLength: 256 },
    // Avvio's 10 s default per plugin is a start-up race on a loaded 2-core machine (three apps migrating at once
    // timed out in 'ferry-openapi'); a plugin that truly hangs still fails, after a minute.
    pluginTimeout: 60_000,
    rewriteUrl: rewriteVersionedUrl,
    clientErrorHandler: createClientErrorHandler(clock.now),
    // Errors raised before routing (a malformed URL) still leave as the envelope, with their request id.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendAppError(reply, badTargetError(request.raw) ?? toAppError(error), clock.now());
    },
  };
  const app = Fastify(options);

  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  // Redis or not, decided once: what instances share (shared-state.ts).
  const shared = await createSharedState({
    config, storage, redis: deps.redis ?? null, clock, log: app.log,
    ...(deps.redisPrefix ? { redisPrefix: deps.redisPrefix } : {}), ...(deps.rateLimitStore ? { rateLimitStore: deps.rateLimitStore } : {}),
  });

  const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
  // Cursors are signed with a key derived from (not equal to) the token key.
  const paginator = new Paginator(createHash('sha256').update('ferry-cursor:').update(jwtSecret).digest());

  const jwt = createJwt(jwtSecret, clock);
  const metrics = deps.metrics ?? createMetrics({ storage, clock });

  // The modules (src/app-module.ts): each built once here from what it needs, wired below by the same loops.
  const usersModule = createUsersModule({ db: storage.db, dialect: storage.dialect, paginator, clock, passwordHashCost: config.passwordHashCost });
  const { users, repository: usersRepo, passwords } = usersModule;
  const tokensModule = createTokensModule({ db: storage.db, users: usersRepo, passwords, denyList: shared.denyList, jwt, clock, ttlSeconds: config.tokenTtlSeconds });
  const { tokens } = tokensModule;
  const apiKeysModule = createApiKeysModule({ db: storage.db, users: usersRepo, jwtSecret, clock, paginator, log: app.log });
  const { apiKeys } = apiKeysModule;
  const ordersModule = createOrdersModule({ db: storage.db, users: usersRepo, clock, paginator });
  const idempotencyModule = createIdempotencyModule({ db: storage.db, clock, ttlSeconds: config.idempotencyTtlSeconds, lockTimeoutMs: config.idempotencyLockTimeoutMs });
  const { idempotency } = idempotencyModule;

  if (config.adminUsername && config.adminPassword) {
    const outcome = await users.ensureAdmin(config.adminUsername, config.adminPassword);
    app.log.info({ admin: config.adminUsername, outcome }, 'first admin ensured');
  }

  // How clicks travel (in-process, or the Redis stream on PostgreSQL) is the clicks module's choice.
  const clickPipeline = await createClickPipeline({
    config, storage, redis: shared.redis, redisPrefix: shared.redisPrefix, log: app.log, clock, ...(deps.clickQueue ? { queue: deps.clickQueue } : {}),
  });
  // The embedded database is one process's file: no other instance changes links behind the cache's back.
  // What a click learns besides the request (SPEC §15): the country, and IP_ANONYMIZE's shortening and hash.
  const describeVisit = createVisitContext({
    countryHeader: config.countryHeader,
    geoip: await openGeoipDatabase(config.geoipDatabase),
    anonymize: config.ipAnonymize,
    salt: visitorSalt(jwtSecret),
  });
  const linksModule = createLinksModule({
    config, storage, users: usersRepo, paginator, clock, passwords, clickQueue: clickPipeline.queue, describeVisit,
    passwordAttempts: shared.passwordAttempts,
    soleWriter: isEmbedded(storage),
  });
  const clicksModule = createClicksModule({
    storage, links: linksModule.links, users: usersRepo, paginator, clock, pipeline: clickPipeline, retentionMonths: config.clickRetentionMonths, log: app.log,
  });
  // In the order their routes are registered and their schemas added; closed in reverse.
  const modules: AppModule[] = [usersModule, tokensModule, ordersModule, linksModule, clicksModule, apiKeysModule, idempotencyModule];
  // On PostgreSQL other instances may change links: their changes reach this cache over LISTEN/NOTIFY.
  const cacheBus = config.databaseUrl ? await createPgLinkCacheBus({ connectionString: config.databaseUrl, origin: linksModule.changeOrigin, cache: linksModule.cache, log: app.log }) : null;

  // Read by metrics (depth, dropped) and by tests (flush).
  app.decorate('clickQueue', clickPipeline.queue);
  metrics.setClickQueueProvider(() => clickPipeline.stats());

  const schemas = [...sharedSchemas, ...healthSchemas, ...modules.flatMap((m) => m.schemas)];
  for (const s of schemas) app.addSchema(s);
  installValidators(app, schemas, compilers);
  app.decorate('compilers', compilers);

  // Root: what every response needs, and cheap enough for the redirect's hot path.
  await app.register(errorsPlugin, { clock });
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
  await app.register(openapiPlugin, { publicBaseUrl: config.publicBaseUrl });
  await app.register(authPlugin, { authenticators: { token: (t) => tokens.authenticate(t), apiKey: (k) => apiKeys.authenticate(k) } });
  // Before any route: routes that opt in with config.idempotency are wired as they are added.
  await app.register(idempotencyPlugin, { idempotency });

  // The JSON API: an encapsulated context with the protections and HTTP semantics of SPEC §1. The redirect
  // and the operational endpoints live in sibling contexts and do not pay for these hooks.
  // Both versions share it: one set of protections (and rate-limit counters), one service layer; a version is
  // a thin mapping at the edge (SPEC §9). Unversioned /api paths were rewritten to one of them (rewriteUrl).
  await app.register(async (api) => {
    await api.register(versioningPlugin, { policies: config.apiDeprecation });
    await api.register(corsPlugin, { corsOrigins: config.corsOrigins });
    await api.register(securityHeadersPlugin, { profile: 'api', publicBaseUrl: config.publicBaseUrl });
    await api.register(rateLimitPlugin, {
      perMinute: config.rateLimitPerMinute,
      tokenPerMinute: config.tokenRateLimitPerMinute,
      verifyToken: jwt.verify,
      apiKeyId: async (request) => (await app.authenticate(request))?.apiKey?.id ?? null,
      store: shared.rateLimitStore,
    });
    await api.register(contentTypePlugin);
    await api.register(conditionalPlugin);
    for (const version of VERSIONS) {
      const basePath = `/api/v${version}`;
      await api.register(async (v) => {
        for (const m of modules) if (m.apiRoutes) await v.register(m.apiRoutes, { basePath, version });
      }, { prefix: `/v${version}` });
    }
  }, { prefix: '/api' });

  // Health, readiness and metrics: root-level, outside the API's hooks and limits.
  await app.register(healthRoutes, { checks: { database: databaseCheck(storage), ...shared.readiness, ...deps.readinessChecks }, metrics, clickStream: clickPipeline.stream });

  // The dashboard (SPEC §16): GET /, /app and its assets, with their own CSP; not the API, not in the document.
  const webDir = config.webDir ?? defaultWebDir();
  const webAssets = findWebAssets(webDir);
  if (!webAssets) app.log.warn({ webDir }, 'the dashboard is not built (no index.html and assets/ there): /app answers 503 until `npm run build`');
  await app.register(dashboardRoutes, { assets: webAssets, publicBaseUrl: config.publicBaseUrl, clock });

  // GET /{code}: a sibling of the API context with only what it needs (its own per-IP limit), none of the
  // API's hooks. See modules/links/redirect.routes.ts for the route and redirect-fast-path.ts for cache hits.
  // One limiter (in process, or in Redis with REDIS_URL) for the route's hook and the fast path.
  const redirectLimiter = shared.redirectLimiter;
  await app.register(linksModule.redirectRoutes, {
    protect: async (scope: FastifyInstance) => registerRedirectRateLimit(scope, { perMinute: config.redirectRateLimitPerMinute, limiter: redirectLimiter }),
  });
  // Cache hits skip Fastify's hooks: only where the fast path can apply every protection itself (the rate
  // limit, client IP from the socket); from the first shutdown step on, everything goes through Fastify.
  const fastPath = config.trustProxy === false
    ? linksModule.redirectFastPath({ limiter: redirectLimiter, requestId: requestIdFrom, metrics, underPressure: () => app.shedding() })
    : null;
  if (fastPath) {
    redirectFastPath = fastPath;
    app.addHook('preClose', (done) => {
      fastPath.disable();
      done();
    });
  }

  const scheduler = createScheduler(app.log);
  for (const m of modules) for (const job of m.jobs ?? []) scheduler.every(job.name, job.everyMs, job.run);
  app.addHook('onClose', async () => {
    compilers.stop();
    await scheduler.stop();
    // After in-flight requests, before the caller closes the database: no queued click is lost (clicks).
    for (const m of [...modules].reverse()) await m.close?.();
    await cacheBus?.close();
  });

  return app;
}
