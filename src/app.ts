import { createHash } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Storage } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import { createScheduler } from './infra/scheduler.js';
import { systemClock, type Clock } from './lib/clock.js';
import { sharedSchemas } from './lib/common.schemas.js';
import { Paginator } from './lib/pagination.js';
import type { ClickQueue } from './infra/click-queue.js';
import { createLinksModule, linksModuleSchemas } from './modules/links/links.module.js';
import { createJwt } from './modules/tokens/jwt.js';
import { loadJwtSecret } from './modules/tokens/secret.js';
import { createSqlDenyList, createTokensRepository } from './modules/tokens/tokens.repository.js';
import { tokensRoutes } from './modules/tokens/tokens.routes.js';
import { tokenSchemas } from './modules/tokens/tokens.schemas.js';
import { createTokensService } from './modules/tokens/tokens.service.js';
import { createUsersRepository } from './modules/users/users.repository.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { userSchemas } from './modules/users/users.schemas.js';
import { createUsersService } from './modules/users/users.service.js';
import authPlugin from './plugins/auth.js';
import conditionalPlugin from './plugins/conditional.js';
import contentTypePlugin from './plugins/content-type.js';
import errorsPlugin from './plugins/errors.js';
import corsPlugin from './plugins/cors.js';
import methodsPlugin from './plugins/methods.js';
import openapiPlugin from './plugins/openapi.js';
import requestIdPlugin, { requestIdFrom } from './plugins/request-id.js';
import { installValidators } from './plugins/validation.js';

export interface AppDeps {
  storage: Storage;
  clock?: Clock;
  /** pino options or a logger instance; defaults to pino at config.logLevel */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyServerOptions['loggerInstance'];
  /** the click queue (default: in-process, bounded, flushed to this database) */
  clickQueue?: ClickQueue;
}

const API_V1 = '/api/v1';

/**
 * The whole service as one Fastify instance. server.ts and the tests both build it here, with the same
 * options; a test changes behaviour only by passing other dependencies (a database, a clock).
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const { storage } = deps;

  const options: FastifyServerOptions = {
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
    // Slow-loris protection: a request must arrive whole within 30 s; idle keep-alive sockets close after 5 s.
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
    connectionTimeout: 60_000,
    return503OnClosing: true,
    routerOptions: { maxParamLength: 256 },
  };
  const app = Fastify(options);

  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);

  const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
  // Cursors are signed with a key derived from (not equal to) the token key.
  const paginator = new Paginator(createHash('sha256').update('ferry-cursor:').update(jwtSecret).digest());

  const usersRepo = createUsersRepository(storage.db, paginator);
  const users = createUsersService({ users: usersRepo, dialect: storage.dialect, clock, paginator });
  const tokens = createTokensService({
    users: usersRepo,
    tokens: createTokensRepository(storage.db),
    denyList: createSqlDenyList(storage.db),
    jwt: createJwt(jwtSecret, clock),
    clock,
    ttlSeconds: config.tokenTtlSeconds,
  });

  if (config.adminUsername && config.adminPassword) {
    const outcome = await users.ensureAdmin(config.adminUsername, config.adminPassword);
    app.log.info({ admin: config.adminUsername, outcome }, 'first admin ensured');
  }

  const linksModule = createLinksModule({
    config, storage, users: usersRepo, paginator, clock, log: app.log, ...(deps.clickQueue ? { clickQueue: deps.clickQueue } : {}),
  });

  // Read by metrics (depth, dropped) and by tests (flush).
  app.decorate('clickQueue', linksModule.clickQueue);

  const schemas = [...sharedSchemas, ...userSchemas, ...tokenSchemas, ...linksModuleSchemas];
  for (const s of schemas) app.addSchema(s);
  installValidators(app, schemas);

  // Root: what every response needs, and cheap enough for the redirect's hot path.
  await app.register(errorsPlugin, { clock });
  await app.register(requestIdPlugin);
  await app.register(methodsPlugin, { clock });
  await app.register(openapiPlugin, { publicBaseUrl: config.publicBaseUrl });
  await app.register(authPlugin, { tokens });

  // The JSON API: an encapsulated context with the protections and HTTP semantics of SPEC §1. The redirect
  // and the operational endpoints live in sibling contexts and do not pay for these hooks.
  await app.register(async (api) => {
    await api.register(corsPlugin, { corsOrigins: config.corsOrigins });
    await api.register(contentTypePlugin);
    await api.register(conditionalPlugin);
    await api.register(usersRoutes, { users, basePath: API_V1 });
    await api.register(tokensRoutes, { tokens, basePath: API_V1 });
    await api.register(linksModule.apiRoutes, { basePath: API_V1 });
  }, { prefix: API_V1 });

  // GET /{code}: a sibling of the API context, with none of its hooks (the redirect's hot path).
  await app.register(linksModule.redirectRoutes);

  const scheduler = createScheduler(app.log);
  scheduler.every('purge-expired-tokens', 10 * 60_000, () => tokens.purgeExpired());
  scheduler.every('sweep-expired-links', 60_000, () => linksModule.links.sweepExpired());
  app.addHook('onClose', async () => {
    await scheduler.stop();
    // After in-flight requests, before the caller closes the database: no queued click is lost.
    await linksModule.close();
  });

  return app;
}
