import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, LogLevel } from 'fastify';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import { createMemoryAttemptLimiter, type AttemptLimiter } from '../../infra/attempt-limiter.js';
import { createMemoryClickQueue, type ClickQueue } from '../../infra/click-queue.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import { createClickRecordsRepository } from '../clicks/click-records.repository.js';
import { clickRecordsRoutes } from '../clicks/click-records.routes.js';
import { clickRecordSchemas } from '../clicks/click-records.schemas.js';
import { createClickRecordsService } from '../clicks/click-records.service.js';
import { createClicksRepository } from '../clicks/clicks.repository.js';
import { clicksRoutes } from '../clicks/clicks.routes.js';
import { clickSchemas } from '../clicks/clicks.schemas.js';
import { createClicksService } from '../clicks/clicks.service.js';
import type { PasswordHasher } from '../users/password.js';
import type { UsersRepository } from '../users/users.repository.js';
import { DEFAULT_LINK_CACHE, LinkCache } from './link-cache.js';
import { createLinksBulk } from './links.bulk.js';
import { createLinksRepository } from './links.repository.js';
import { linksRoutes } from './links.routes.js';
import { linkSchemas } from './links.schemas.js';
import { createLinksService } from './links.service.js';
import { createRedirectFastPath, type RedirectFastPathDeps } from './redirect-fast-path.js';
import { redirectRoutes } from './redirect.routes.js';
import { linkV2Schemas } from './links.v2.js';
import { createVisitPolicy } from './visit-policy.js';
import type { ApiVersion } from '../../plugins/versioning.js';

export const linksModuleSchemas = [...linkSchemas, ...clickSchemas, ...linkV2Schemas, ...clickRecordSchemas];

export interface LinksModuleDeps {
  config: Pick<Config, 'publicBaseUrl' | 'redirectStatus' | 'clickFlushMs' | 'clickBatchSize' | 'clickQueueLimit' | 'logLevel' | 'linkCacheSize' | 'linkPasswordAttemptsPerMinute'>;
  storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>;
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
  log: FastifyBaseLogger;
  /** link passwords are hashed and checked like users' (scrypt on the thread pool) */
  passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
  /** wrong link passwords per link and address (scale-out: shared in Redis); default: counted in this process */
  passwordAttempts?: AttemptLimiter;
  /** another queue (Redis Streams, scale-out); default: the in-process queue writing to this database */
  clickQueue?: ClickQueue;
  /**
   * This process is the only one that changes links (the embedded database): every change passes through
   * this cache's invalidation, so a cached link needs no time limit. Otherwise other instances may change
   * links: their changes arrive over the change feed (infra/pg-link-cache-bus.ts), and an entry is also
   * re-read after DEFAULT_LINK_CACHE.positiveTtlMs.
   */
  soleWriter?: boolean;
}

/**
 * A redirect's access log is its click record; two pino lines per redirect at LOG_LEVEL=info would cost
 * about as much as the redirect itself (bench/redirect.ts). debug and trace keep them. (A route-level
 * logLevel would also do it, but makes Fastify rebuild a logger per request.)
 */
const redirectAccessLog = (level: LogLevel): boolean => level === 'debug' || level === 'trace';

/**
 * With a queue whose enqueue completes later (the Redis stream), a redirect is answered only once its click
 * is durable: an instance killed after answering then loses no click (docs/deployment.md measures the cost).
 */
function awaitDurableClicks(scope: FastifyInstance, settled: () => Promise<void> | null): void {
  scope.addHook('onSend', (_request, reply, payload, done) => {
    const pending = reply.statusCode >= 300 && reply.statusCode < 400 ? settled() : null;
    if (pending) void pending.then(() => done(null, payload));
    else done(null, payload);
  });
}

/** Links and clicks, wired: the services, the two route plugins, and what app.ts schedules and closes. */
export function createLinksModule(deps: LinksModuleDeps) {
  const { config, storage, clock } = deps;
  const cache = new LinkCache(clock, {
    ...DEFAULT_LINK_CACHE,
    capacity: config.linkCacheSize,
    ...(deps.soleWriter ? { positiveTtlMs: Number.POSITIVE_INFINITY } : {}),
  });
  // This instance's name in link-change messages (infra/pg-link-cache-bus.ts).
  const changeOrigin = randomBytes(8).toString('hex');
  const linksRepository = createLinksRepository(storage, deps.paginator, changeOrigin);
  const links = createLinksService({
    links: linksRepository,
    users: deps.users,
    dialect: storage.dialect,
    clock,
    paginator: deps.paginator,
    cache,
    publicBaseUrl: config.publicBaseUrl,
    passwords: deps.passwords,
  });
  const bulk = createLinksBulk(links);
  const policy = createVisitPolicy({
    links: linksRepository,
    passwords: deps.passwords,
    attempts: deps.passwordAttempts ?? createMemoryAttemptLimiter({ max: config.linkPasswordAttemptsPerMinute, windowMs: 60_000, clock }),
  });
  const clicksRepository = createClicksRepository(storage);
  const clickQueue = deps.clickQueue ?? createMemoryClickQueue({
    writer: clicksRepository.writer,
    flushMs: config.clickFlushMs,
    batchSize: config.clickBatchSize,
    limit: config.clickQueueLimit,
    log: deps.log.child({ component: 'click-queue' }),
    clock,
  });
  const clicks = createClicksService({ clicks: clicksRepository, links, clock });
  const clickRecords = createClickRecordsService({ records: createClickRecordsRepository(storage.db, deps.paginator), links, paginator: deps.paginator });

  return {
    links,
    clicks,
    clickQueue,
    cache,
    changeOrigin,
    /** On app close: write every queued click, then stop the writer (before the database closes). */
    async close(): Promise<void> {
      await clickQueue.close();
      await clicksRepository.close();
    },
    /**
     * The redirect's cache-hit path outside Fastify (redirect-fast-path.ts), for app.ts's server; null when
     * every redirect must write access-log lines (debug, trace).
     */
    redirectFastPath: (d: Pick<RedirectFastPathDeps, 'limiter' | 'requestId' | 'metrics' | 'underPressure'>) =>
      redirectAccessLog(config.logLevel) ? null : createRedirectFastPath({ cache, clicks: clickQueue, clock, status: config.redirectStatus, ...d }),
    /** JSON routes, registered inside the /api/v1 context */
    apiRoutes: (async (api, opts) => {
      await api.register(linksRoutes, { links, bulk, basePath: opts.basePath, version: opts.version });
      await api.register(clicksRoutes, { clicks, version: opts.version });
      await api.register(clickRecordsRoutes, { records: clickRecords, version: opts.version });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
    /**
     * GET /{code}: registered at the root, as a sibling of the /api/v1 context. `protect` adds the
     * redirect's own protections to this context before the route (e.g. its rate limit).
     */
    redirectRoutes: (async (scope, opts) => {
      await opts.protect?.(scope);
      if (clickQueue.settled) awaitDurableClicks(scope, clickQueue.settled.bind(clickQueue));
      await scope.register(redirectRoutes, {
        links, policy, clicks: clickQueue, clock, status: config.redirectStatus, accessLog: redirectAccessLog(config.logLevel),
      });
    }) as FastifyPluginAsync<{ protect?: (scope: FastifyInstance) => Promise<void> }>,
  };
}

export type LinksModule = ReturnType<typeof createLinksModule>;
