import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { registerContexts } from './app-contexts.js';
import { createModules, type Modules, type ServerParts } from './app-modules.js';
import {
  closeInOrder,
  ensureFirstAdmin,
  followLinkChanges,
  loadBlocklist,
  scheduleJobs,
  type JobRunnerOptions,
} from './app-lifecycle.js';
import { fastifyOptions } from './app-options.js';
import type { Config } from './config.js';
import { isEmbedded, type Storage } from './db/database.js';
import { migrateToLatest } from './db/migrator.js';
import type { RawHandler } from './infra/http-server.js';
import type { JobRunner } from './infra/job-runner.js';
import { connectionLossLogger } from './infra/dependency-faults.js';
import { createStorageHealth } from './infra/storage-health.js';
import { createMetrics, type Metrics } from './infra/metrics.js';
import { createServingLoad } from './infra/serving-load.js';
import type { Redis } from './infra/redis.js';
import { systemClock, type Clock } from './lib/clock.js';
import type { ReadinessCheck } from './lib/readiness-check.js';
import { databaseCheck } from './modules/health/index.js';
import { loadJwtSecret } from './modules/tokens/index.js';
import { createLazyCompilers } from './plugins/lazy-compilers.js';
import type { RateLimitStore } from './plugins/rate-limit.js';
import { createSharedState } from './shared-state.js';
import type { Dispatcher } from './modules/webhooks/index.js';
import type { OutboundHttp } from './infra/outbound-http.js';

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
  /** SPEC §24's destination checks: their outbound requests (a test's resolver) and slice length */
  linkChecks?: { outbound?: OutboundHttp; sliceMs?: number };
  /**
   * PostgreSQL's outbox feed timing (infra/outbox-feed.ts): a test of something else than the feed may
   * trust it longer, so that a loaded machine's late heartbeat does not send its visits to the database
   */
  linkChangeFeed?: { heartbeatMs?: number; trustMs?: number };
  /** the background jobs' lease and heartbeat, and this instance's name among the holders (infra/job-runner.ts) */
  jobRunner?: JobRunnerOptions;
  /** the live event stream's timing (modules/events: heartbeat, poll); tests shorten it */
  eventStream?: { heartbeatMs?: number; pollMs?: number };
  /** EVENTS_URL's bus: reconnection and publishing timing (tests shorten them) */
  eventsBus?: ServerParts['eventsBus'];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** runs one of the modules' background jobs now, by name */
    runJob(name: string): Promise<unknown>;
    /** the modules' background jobs in their turns among the instances (infra/job-runner.ts) */
    jobs: JobRunner;
    /** SPEC §22's deliveries in this instance: tests nudge it (tick) and wait for it (idle) */
    webhookDispatcher: Dispatcher;
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
  const app = Fastify(
    fastifyOptions({
      config,
      clock,
      compilers,
      fastPath: () => redirectFastPath,
      ...(deps.loggerInstance ? { loggerInstance: deps.loggerInstance } : {}),
      ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
    }),
  );

  // First: an unreadable BLOCKED_HOSTS_FILE stops the start before anything is opened (SPEC §17).
  const blockedHosts = await loadBlocklist(app, config);
  // A lost database connection is logged here, once an episode; requests that met it answer 503 (SPEC §17).
  storage.onConnectionError(connectionLossLogger(app.log, 'database'));
  await migrateToLatest(storage.db as unknown as Kysely<unknown>, storage.dialect);
  // Redis or not, decided once: what instances share (shared-state.ts).
  const shared = await sharedStateFor(app, config, deps);
  const jwtSecret = loadJwtSecret(config.jwtSecret, config.dataDir);
  const { metrics, load } = metricsOf(app, deps, clock);
  // Whether writes can land (SPEC §17): failed writes report here; on the embedded engine DATA_DIR is probed too.
  const storageHealth = createStorageHealth({ dataDir: isEmbedded(storage) ? config.dataDir : null });
  const checks = {
    database: databaseCheck(storage),
    storage: storageHealth.check,
    ...shared.readiness,
    ...deps.readinessChecks,
  };

  const modules = await createModules({
    config,
    storage,
    shared,
    clock,
    jwtSecret,
    log: app.log,
    blockedHosts,
    server: {
      metrics,
      busy: load.busy,
      checks,
      accounts: (core) => ensureFirstAdmin(app, config, core),
      ...(deps.domainVerification ? { domainVerification: deps.domainVerification } : {}),
      ...(deps.eventStream ? { eventStream: deps.eventStream } : {}),
      ...(deps.eventsBus ? { eventsBus: deps.eventsBus } : {}),
      ...(deps.linkChecks ? { linkChecks: deps.linkChecks } : {}),
    },
  });
  const sink = modules.clickIngest.sink!; // a server's modules always have one (createModules: `server`)
  const cacheBus = await followLinkChanges(app, config, storage, modules, deps.linkChangeFeed);
  // Read by metrics (depth, dropped) and by tests (flush).
  app.decorate('clickQueue', sink);
  app.decorate('passwordHashing', modules.hashLanes);
  metrics.setClickQueueProvider(() => sink.status());

  await registerContexts(app, { config, clock, metrics, storageHealth, shared, modules, compilers });
  redirectFastPath = modules.redirectModule?.fastPath(app) ?? null;

  const jobs = scheduleJobs(app, modules.list, { storage, clock, metrics, options: deps.jobRunner ?? {} });
  startEventDelivery(app, modules);
  blockedHosts.watch();
  closeInOrder(app, { compilers, jobs, modules: modules.list, shared, cacheBus, blockedHosts });
  return app;
}

/**
 * SPEC §22 in a serving process, from now until close (the modules' close stops them): the webhooks' dispatcher,
 * the events' wake-ups, and EVENTS_URL's bus, connected in the background (a bus that is down never holds the start).
 */
function startEventDelivery(app: FastifyInstance, modules: Pick<Modules, 'webhooksModule' | 'eventsModule'>): void {
  modules.webhooksModule.dispatcher.start();
  app.decorate('webhookDispatcher', modules.webhooksModule.dispatcher);
  modules.eventsModule.start();
}

/**
 * The process's metrics (a test's own, or new ones closed with the app), and whether it is busy serving, read from
 * the requests they count (infra/serving-load.ts: work that can wait gives way).
 */
function metricsOf(app: FastifyInstance, deps: AppDeps, clock: Clock) {
  const metrics = deps.metrics ?? createMetrics({ storage: deps.storage, clock });
  if (deps.metrics === undefined) app.addHook('onClose', async () => metrics.close());
  const load = createServingLoad(() => metrics.requestsAnswered());
  app.addHook('onClose', async () => load.stop());
  return { metrics, load };
}

/** What instances share (shared-state.ts), from this app's Redis, if any, and a test's own prefix or store. */
function sharedStateFor(app: FastifyInstance, config: Config, deps: AppDeps) {
  return createSharedState({
    config,
    storage: deps.storage,
    redis: deps.redis ?? null,
    clock: deps.clock ?? systemClock,
    log: app.log,
    ...(deps.redisPrefix ? { redisPrefix: deps.redisPrefix } : {}),
    ...(deps.rateLimitStore ? { rateLimitStore: deps.rateLimitStore } : {}),
  });
}
