import type { FastifyBaseLogger, FastifyInstance, FastifyPluginAsync, LogLevel } from 'fastify';
import { appModule } from '../../app-module.js';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import type { AttemptLimiter } from '../../infra/attempt-limiter.js';
import type { RawHandler } from '../../infra/http-server.js';
import type { Metrics } from '../../infra/metrics.js';
import type { Clock } from '../../lib/clock.js';
import { registerRedirectRateLimit, type RedirectLimiter } from '../../plugins/redirect-limit.js';
import { requestIdFrom } from '../../plugins/request-id.js';
import type { ClickSink, CountryLookup, RecordAddress } from '../clicks/index.js';
import type { DomainDirectory } from '../domains/index.js';
import type { PasswordHasher } from '../users/index.js';
import { LinkCache } from './link-cache.js';
import { visitChangeConsumer, type ChangedDomains } from './link-cache-events.js';
import { createRedirectFastPath } from './redirect-fast-path.js';
import { createRedirectResolver } from './redirect-resolver.js';
import { createRedirectQueries } from './redirect.repository.js';
import { redirectRoutes } from './redirect.routes.js';
import { visitContexts } from './visit-context.js';
import { createVisitPolicy } from './visit-policy.js';

export interface RedirectModuleDeps {
  config: Pick<
    Config,
    'redirectStatus' | 'logLevel' | 'linkCacheSize' | 'linkCacheBytes' | 'trustProxy' | 'publicBaseUrl' | 'honorGpc'
  >;
  storage: Pick<Storage, 'db' | 'sqlite'>;
  clock: Clock;
  /** the domains module's directory (SPEC §19): the domain a visit's host names; default: only the default domain */
  domains?: Pick<DomainDirectory, 'servedBy'>;
  /** link passwords are checked like users' (scrypt on the thread pool) */
  passwords: Pick<PasswordHasher, 'verify'>;
  /** wrong link passwords per link and address (shared-state.ts: in this process, or in Redis) */
  passwordAttempts: AttemptLimiter;
  /** password hashes per caller (shared-state.ts); a link unlock is one */
  passwordHashBudget?: AttemptLimiter;
  /** where the redirect puts clicks (the clicks module's ingest) */
  clicks: ClickSink;
  /** a visit's country (COUNTRY_HEADER, GEOIP_DATABASE); default: none */
  country?: CountryLookup | null;
  /** IP_ANONYMIZE's shortening and daily hash of a click's address; default: addresses as seen */
  recordAddress?: RecordAddress | null;
  /**
   * This process is the only one that changes links (the embedded database): every change passes through
   * this cache's invalidation, so a cached link needs no time limit. Otherwise other instances may change
   * links: their changes arrive over the outbox feed (infra/outbox-feed.ts), and an entry is also
   * re-read after DEFAULT_LINK_CACHE.positiveTtlMs.
   */
  soleWriter?: boolean;
  /** the redirect's per-address limiter (in process, or in Redis): the route's hook and the fast path share it */
  limiter: RedirectLimiter;
  metrics: Pick<Metrics, 'observeFastRedirect'>;
}

/**
 * A redirect's access log is its click record; two pino lines per redirect at LOG_LEVEL=info would cost
 * about as much as the redirect itself (bench/redirect.ts). debug and trace keep them. (A route-level
 * logLevel would also do it, but makes Fastify rebuild a logger per request.)
 */
const redirectAccessLog = (level: LogLevel): boolean => level === 'debug' || level === 'trace';

/**
 * A redirect (and an unfurler's preview page, the only 200 here) is answered only once its click is durable
 * (ClickSink.settled: in the journal's file, in the Redis stream; nothing to wait for in memory alone): an
 * instance killed after answering then loses no click (docs/deployment.md and the README measure the cost).
 */
function awaitDurableClicks(scope: FastifyInstance, settled: () => Promise<void> | null): void {
  scope.addHook('onSend', (_request, reply, payload, done) => {
    const pending = reply.statusCode >= 200 && reply.statusCode < 400 ? settled() : null;
    if (pending) void pending.then(() => done(null, payload));
    else done(null, payload);
  });
}

/** The cache's time limit: none where this process is the only writer (RedirectModuleDeps.soleWriter). */
const positiveTtlOf = (deps: Pick<RedirectModuleDeps, 'soleWriter'>) =>
  deps.soleWriter ? { positiveTtlMs: Number.POSITIVE_INFINITY } : {};

/** The policy over this module's cache and queries. */
function visitPolicyFor(deps: RedirectModuleDeps, cache: LinkCache) {
  const queries = createRedirectQueries(deps.storage);
  return createVisitPolicy({
    resolver: createRedirectResolver({ queries, cache, clock: deps.clock }),
    domains: deps.domains ?? { servedBy: () => undefined },
    queries,
    passwords: deps.passwords,
    attempts: deps.passwordAttempts,
    ...(deps.passwordHashBudget ? { hashBudget: deps.passwordHashBudget } : {}),
    status: deps.config.redirectStatus,
    clock: deps.clock,
    publicBaseUrl: deps.config.publicBaseUrl,
  });
}

/**
 * The visit (SPEC §6, §13, §19): GET and POST /{code} at the root, in a context of their own behind the
 * redirect's per-address limit, and the fast path that answers cache hits before Fastify; the link cache they
 * read, and the visit policy that decides every answer. Reads links through its own queries
 * (redirect.repository.ts); the links module drops changed names from the cache through its VisitCache port.
 */
export function createRedirectModule(deps: RedirectModuleDeps) {
  const { config, clock, clicks } = deps;
  const cache = new LinkCache(clock, {
    capacity: config.linkCacheSize,
    maxBytes: config.linkCacheBytes,
    ...positiveTtlOf(deps),
  });
  const policy = visitPolicyFor(deps, cache);
  const contexts = visitContexts(deps.country ?? null, { honorGpc: config.honorGpc });
  const recordAddress = deps.recordAddress ?? null;
  const accessLog = redirectAccessLog(config.logLevel);

  return appModule({
    /** this instance's link cache: the links module's VisitCache */
    cache,
    policy,
    schemas: [],
    /** GET and POST /{code}: registered at the root, after the API, with only the hooks they add themselves */
    rootRoutes: (async (scope) => {
      registerRedirectRateLimit(scope, deps.limiter);
      awaitDurableClicks(scope, () => clicks.settled());
      await scope.register(redirectRoutes, {
        policy,
        contexts,
        clicks,
        clock,
        status: config.redirectStatus,
        recordAddress,
        accessLog,
      });
    }) as FastifyPluginAsync,
    /**
     * The redirect's cache-hit path outside Fastify (redirect-fast-path.ts) for app.ts's server: only where it
     * can apply every protection itself (the rate limit, the client address from the socket) and no access-log
     * lines are due; null otherwise. From the first shutdown step on, everything goes through Fastify.
     */
    fastPath(app: FastifyInstance): RawHandler | null {
      if (config.trustProxy !== false || accessLog) return null;
      const fastPath = createRedirectFastPath({
        policy,
        contexts,
        clicks,
        clock,
        recordAddress,
        limiter: deps.limiter,
        requestId: requestIdFrom,
        metrics: deps.metrics,
        underPressure: () => app.shedding(),
      });
      app.addHook('preClose', (done) => {
        fastPath.disable();
        done();
      });
      return fastPath;
    },
    /** What GET / means on a host (SPEC §19): the dashboard's question, answered by the policy. */
    domainRoot: (host: string) => policy.rootOf(host),
    /** The outbox feed's consumer for what visits read in memory: this cache, and the domains' registry. */
    changeConsumer: (domains: ChangedDomains, log: FastifyBaseLogger) => visitChangeConsumer(cache, domains, log),
  });
}

export type RedirectModule = ReturnType<typeof createRedirectModule>;
