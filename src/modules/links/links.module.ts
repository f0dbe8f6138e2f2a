import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, LogLevel } from 'fastify';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import type { AttemptLimiter } from '../../infra/attempt-limiter.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { ClickSink, DescribeVisit } from '../clicks/index.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import type { DomainRegistry } from '../domains/index.js';
import { DEFAULT_LINK_CACHE, LinkCache } from './link-cache.js';
import { NOTHING_BLOCKED, type HostBlocklist } from '../../lib/host-blocklist.js';
import { createLinkModeration } from './link-moderation.js';
import { createLinksBulk } from './links.bulk.js';
import { createLinksRepository, type LinksRepository } from './links.repository.js';
import { createLinksExport } from './links.export.js';
import { linksRoutes } from './links.routes.js';
import { linkSchemas } from './links.schemas.js';
import { createLinksService, type LinksService } from './links.service.js';
import { createRedirectFastPath, type RedirectFastPathDeps } from './redirect-fast-path.js';
import { redirectRoutes, type VisitDomains } from './redirect.routes.js';
import { linkV2Schemas } from './links.v2.js';
import { createVisitPolicy } from './visit-policy.js';
import { linkImportsFor } from './link-imports.js';
import type { LinkDomainsDeps } from './link-domains.js';

type LinkDomainRegistry = LinkDomainsDeps['registry'] & Pick<DomainRegistry, 'servedBy'>;
import type { ApiVersion } from '../../plugins/versioning.js';
import { appModule } from '../../app-module.js';

export const linksModuleSchemas = [...linkSchemas, ...linkV2Schemas];

export interface LinksModuleDeps {
  config: Pick<Config, 'publicBaseUrl' | 'port' | 'redirectStatus' | 'logLevel' | 'linkCacheSize' | 'anonymousLinks'>;
  storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>;
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
  /** link passwords are hashed and checked like users' (scrypt on the thread pool) */
  passwords: Pick<PasswordHasher, 'hash' | 'verify'>;
  /** wrong link passwords per link and address (shared-state.ts: in this process, or in Redis) */
  passwordAttempts: AttemptLimiter;
  /** password hashes per caller (shared-state.ts); a link unlock is one */
  passwordHashBudget?: AttemptLimiter;
  /** BLOCKED_HOSTS_FILE's list (infra/blocked-hosts-file.ts); default: nothing blocked */
  blockedHosts?: HostBlocklist;
  /** where the redirect puts clicks (the clicks module's ingest); null where no visit is served (the CLI) */
  clicks: ClickSink | null;
  /** what a click learns besides the request (country, IP_ANONYMIZE); default: nothing */
  describeVisit?: DescribeVisit;
  /**
   * This process is the only one that changes links (the embedded database): every change passes through
   * this cache's invalidation, so a cached link needs no time limit. Otherwise other instances may change
   * links: their changes arrive over the outbox feed (infra/outbox-feed.ts), and an entry is also
   * re-read after DEFAULT_LINK_CACHE.positiveTtlMs.
   */
  soleWriter?: boolean;
  /** this instance's name in the outbox (db/outbox.ts, infra/outbox-feed.ts); default: a random one */
  changeOrigin?: string;
  /** the domains module's registry (SPEC §19); default: only the default domain */
  domains?: LinkDomainRegistry;
}

/**
 * A redirect's access log is its click record; two pino lines per redirect at LOG_LEVEL=info would cost
 * about as much as the redirect itself (bench/redirect.ts). debug and trace keep them. (A route-level
 * logLevel would also do it, but makes Fastify rebuild a logger per request.)
 */
const redirectAccessLog = (level: LogLevel): boolean => level === 'debug' || level === 'trace';

/**
 * A redirect is answered only once its click is durable (ClickSink.settled: in the journal's file, in the Redis
 * stream; nothing to wait for in memory alone): an instance killed after answering then loses no click
 * (docs/deployment.md and the README measure the cost).
 */
function awaitDurableClicks(scope: FastifyInstance, settled: () => Promise<void> | null): void {
  scope.addHook('onSend', (_request, reply, payload, done) => {
    const pending = reply.statusCode >= 300 && reply.statusCode < 400 ? settled() : null;
    if (pending) void pending.then(() => done(null, payload));
    else done(null, payload);
  });
}

/** The click sink of a serving process: the redirect is never built without one. */
function servingSink({ clicks }: Pick<LinksModuleDeps, 'clicks'>): ClickSink {
  if (!clicks) throw new Error('the redirect is served only by a process with a click sink (a server\'s modules)');
  return clicks;
}

/** How often links past their expiry are swept (their codes stay blocked; SPEC §6). */
const SWEEP_EVERY_MS = 60_000;

/** The cache's time limit: none where this process is the only writer (LinksModuleDeps.soleWriter). */
const positiveTtlOf = (deps: Pick<LinksModuleDeps, 'soleWriter'>) =>
  deps.soleWriter ? { positiveTtlMs: Number.POSITIVE_INFINITY } : {};

/** The links service over this module's repository and cache. */
function linksServiceFor(
  deps: LinksModuleDeps,
  linksRepository: LinksRepository,
  cache: LinkCache,
  blockedHosts: HostBlocklist,
) {
  const { config, storage } = deps;
  return createLinksService({
    links: linksRepository,
    users: deps.users,
    dialect: storage.dialect,
    clock: deps.clock,
    paginator: deps.paginator,
    cache,
    publicBaseUrl: config.publicBaseUrl,
    listenPort: config.port,
    passwords: deps.passwords,
    anonymousLinks: config.anonymousLinks,
    blockedHosts,
    ...(deps.domains ? { domains: deps.domains } : {}),
  });
}

/**
 * GET /{code}: registered at the root, as a sibling of the /api/v1 context. `protect` adds the
 * redirect's own protections to this context before the route (e.g. its rate limit).
 */
function redirectPluginOf(
  deps: LinksModuleDeps,
  links: LinksService,
  linksRepository: LinksRepository,
  visitDomains: VisitDomains,
) {
  const { config } = deps;
  const policy = createVisitPolicy({
    links: linksRepository,
    passwords: deps.passwords,
    attempts: deps.passwordAttempts,
    ...(deps.passwordHashBudget ? { hashBudget: deps.passwordHashBudget } : {}),
  });
  return (async (scope, opts) => {
    const clicks = servingSink(deps);
    await opts.protect?.(scope);
    awaitDurableClicks(scope, () => clicks.settled());
    await scope.register(redirectRoutes, {
      links, domains: visitDomains, policy, clicks, clock: deps.clock, status: config.redirectStatus,
      describeVisit: deps.describeVisit ?? null, accessLog: redirectAccessLog(config.logLevel),
    });
  }) as FastifyPluginAsync<{ protect?: (scope: FastifyInstance) => Promise<void> }>;
}

/** Links, wired: the service, the cache, the two route plugins, and the sweep of expired links. */
export function createLinksModule(deps: LinksModuleDeps) {
  const { config, storage, clock } = deps;
  const blockedHosts = deps.blockedHosts ?? NOTHING_BLOCKED;
  const cache = new LinkCache(clock, { ...DEFAULT_LINK_CACHE, capacity: config.linkCacheSize, ...positiveTtlOf(deps) });
  // This instance's name in the outbox (infra/outbox-feed.ts).
  const changeOrigin = deps.changeOrigin ?? randomBytes(8).toString('hex');
  const linksRepository = createLinksRepository(storage, deps.paginator, changeOrigin);
  const links = linksServiceFor(deps, linksRepository, cache, blockedHosts);
  const bulk = createLinksBulk(links);
  const linkImports = linkImportsFor({ config, storage, blockedHosts, cache, clock });
  const exports = createLinksExport({ links: linksRepository, users: deps.users, paginator: deps.paginator, clock, domains: links.domains });
  const moderation = createLinkModeration({ links: linksRepository, cache, blockedHosts, clock, paginator: deps.paginator, toLink: links.toLink, domains: links.domains });
  const visitDomains: VisitDomains = deps.domains ?? { servedBy: () => undefined };

  return appModule({
    links,
    /** the importers' way in (SPEC §25: imported links follow the API's rules) */
    linkImports,
    moderation,
    blockedHosts,
    cache,
    changeOrigin,
    schemas: linksModuleSchemas,
    jobs: [{ name: 'sweep-expired-links', everyMs: SWEEP_EVERY_MS, run: () => links.sweepExpired() }],
    /**
     * The redirect's cache-hit path outside Fastify (redirect-fast-path.ts), for app.ts's server; null when
     * every redirect must write access-log lines (debug, trace).
     */
    redirectFastPath: (d: Pick<RedirectFastPathDeps, 'limiter' | 'requestId' | 'metrics' | 'underPressure'>) =>
      redirectAccessLog(config.logLevel) ? null : createRedirectFastPath({ cache, domains: visitDomains, clicks: servingSink(deps), clock, status: config.redirectStatus, describeVisit: deps.describeVisit ?? null, ...d }),
    /** JSON routes, registered inside the /api/v1 context */
    apiRoutes: (async (api, opts) => {
      await api.register(linksRoutes, { links, bulk, exports, moderation, basePath: opts.basePath, version: opts.version });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
    /** GET /{code}, registered at the root (redirectPluginOf) */
    redirectRoutes: redirectPluginOf(deps, links, linksRepository, visitDomains),
  });
}

export type LinksModule = ReturnType<typeof createLinksModule>;
