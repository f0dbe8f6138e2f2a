import type { FastifyInstance } from 'fastify';
import type { AppModule } from './app-module.js';
import type { Modules } from './app-modules.js';
import type { Config } from './config.js';
import type { StorageHealth } from './infra/storage-health.js';
import type { Metrics } from './infra/metrics.js';
import type { Clock } from './lib/clock.js';
import { sharedSchemas } from './lib/common.schemas.js';
import type { IdempotencyService } from './modules/idempotency/index.js';
import authPlugin, { type Authenticators } from './plugins/auth.js';
import conditionalPlugin from './plugins/conditional.js';
import contentTypePlugin from './plugins/content-type.js';
import corsPlugin from './plugins/cors.js';
import errorsPlugin from './plugins/errors.js';
import idempotencyPlugin from './plugins/idempotency.js';
import type { LazyCompilers } from './plugins/lazy-compilers.js';
import methodsPlugin from './plugins/methods.js';
import openapiPlugin from './plugins/openapi.js';
import { eventWebhooks } from './modules/events/index.js';
import pathIdsPlugin from './plugins/path-ids.js';
import overloadPlugin from './plugins/overload.js';
import rateLimitPlugin, { createCallerLimit, type RateLimitHook, type RateLimitStore } from './plugins/rate-limit.js';
import passwordHashBudgetPlugin, { type PasswordHashBudgetOptions } from './plugins/password-hash-budget.js';
import requestMetricsPlugin from './plugins/request-metrics.js';
import requestIdPlugin from './plugins/request-id.js';
import { rejectBadTarget } from './plugins/request-target.js';
import securityHeadersPlugin from './plugins/security-headers.js';
import { installValidators } from './plugins/validation.js';
import versioningPlugin, { VERSIONS } from './plugins/versioning.js';
import type { SharedState } from './shared-state.js';

/**
 * The app's HTTP contexts, in the order buildApp (app.ts) registers them: the schemas, the root's plugins, the
 * JSON API's context with every module's apiRoutes per version, then every module's rootRoutes beside it.
 */
export async function registerContexts(
  app: FastifyInstance,
  deps: {
    config: Config;
    clock: Clock;
    metrics: Metrics;
    storageHealth: Pick<StorageHealth, 'failed'>;
    shared: Pick<SharedState, 'rateLimitStore' | 'passwordHashBudget'>;
    modules: Pick<
      Modules,
      'list' | 'jwt' | 'tokensModule' | 'apiKeysModule' | 'twoFactorModule' | 'idempotencyModule' | 'hashLanes'
    >;
    compilers: LazyCompilers;
  },
): Promise<void> {
  const { config, clock, metrics, storageHealth, shared, modules } = deps;
  addSchemas(app, modules.list, deps.compilers);
  // One budget per caller for the API and the OpenAPI document (plugins/rate-limit.ts).
  const callerLimit = await createCallerLimit(app, {
    perMinute: config.rateLimitPerMinute,
    verifyToken: modules.jwt.verify,
    store: shared.rateLimitStore,
    apiKeyId: async (request) => (await app.authenticate(request))?.apiKey?.id ?? null,
  });
  await registerRootPlugins(app, {
    config,
    clock,
    metrics,
    storageHealth,
    callerLimit,
    authenticators: {
      token: (t) => modules.tokensModule.tokens.authenticate(t),
      apiKey: (k) => modules.apiKeysModule.apiKeys.authenticate(k),
      ...(config.totpRequiredForAdmins
        ? { adminHasTotp: (userId: number) => modules.twoFactorModule.twoFactor.isEnabled(userId) }
        : {}),
    },
    idempotency: modules.idempotencyModule.idempotency,
  });
  const hashBudget = {
    budget: shared.passwordHashBudget,
    perMinute: config.passwordHashesPerMinute,
    lanes: modules.hashLanes,
  };
  await registerApi(app, {
    config,
    modules: modules.list,
    callerLimit,
    rateLimitStore: shared.rateLimitStore,
    hashBudget,
  });
  for (const m of modules.list) if (m.rootRoutes) await app.register(m.rootRoutes);
}

/** Every module's schemas (and the shared ones) with their $id: validation, and the OpenAPI components. */
function addSchemas(app: FastifyInstance, modules: AppModule[], compilers: LazyCompilers): void {
  const schemas = [...sharedSchemas, ...modules.flatMap((m) => m.schemas)];
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
async function registerRootPlugins(
  app: FastifyInstance,
  { config, clock, metrics, storageHealth, callerLimit, authenticators, idempotency }: RootPluginDeps,
): Promise<void> {
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
  await app.register(openapiPlugin, {
    publicBaseUrl: config.publicBaseUrl,
    rateLimit: callerLimit,
    webhooks: eventWebhooks,
  });
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
async function registerApi(
  app: FastifyInstance,
  { config, modules, callerLimit, rateLimitStore, hashBudget }: ApiDeps,
): Promise<void> {
  await app.register(
    async (api) => {
      await api.register(versioningPlugin, { policies: config.apiDeprecation });
      await api.register(corsPlugin, { corsOrigins: config.corsOrigins });
      await api.register(securityHeadersPlugin, { profile: 'api', publicBaseUrl: config.publicBaseUrl });
      await api.register(rateLimitPlugin, {
        perCaller: callerLimit,
        tokenPerMinute: config.tokenRateLimitPerMinute,
        store: rateLimitStore,
      });
      await api.register(passwordHashBudgetPlugin, hashBudget);
      await api.register(contentTypePlugin);
      await api.register(conditionalPlugin);
      await api.register(pathIdsPlugin);
      for (const version of VERSIONS) {
        const basePath = `/api/v${version}`;
        await api.register(
          async (v) => {
            for (const m of modules) if (m.apiRoutes) await v.register(m.apiRoutes, { basePath, version });
          },
          { prefix: `/v${version}` },
        );
      }
    },
    { prefix: '/api' },
  );
}
