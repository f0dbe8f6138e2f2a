/**
 * The composition root: createModules builds every module once from what it needs, for the server (app.ts),
 * the CLI (cli/services.ts) and, through the clicks module, the worker. A new module is built here (or in a
 * function of its own beside these) and added to createModules' list.
 */
import type { AppModule } from './app-module.js';
import { isEmbedded } from './db/database.js';
import { warnWithoutSearchIndex } from './db/link-search.js';
import type { Metrics } from './infra/metrics.js';
import type { ReadinessCheck } from './lib/readiness-check.js';
import {
  createAddressRecorder,
  createClickIngest,
  createClicksModule,
  createCountryLookup,
  importOnlyClickIngest,
  openGeoipDatabase,
  visitorSalt,
  type ClickSink,
} from './modules/clicks/index.js';
import { createDashboardModule } from './modules/dashboard/index.js';
import { createHealthModule } from './modules/health/index.js';
import { createImportsModule, IMPORT_SOURCE_TIMEOUT_MS, type ImportPace } from './modules/imports/index.js';
import { createLinksModule } from './modules/links/index.js';
import { createEventsModule, type EventsBusDeps, type EventsModule } from './modules/events/index.js';
import type { OutboundHttp } from './infra/outbound-http.js';
import { createRedirectModule } from './modules/redirect/index.js';
import type { HostBlocklist } from './lib/host-blocklist.js';
import { createDomainsModule, type DomainDirectory } from './modules/domains/index.js';
import { randomBytes } from 'node:crypto';
import type { PasswordHasher } from './modules/users/index.js';
import { createCoreModules, type ModuleDeps } from './app-core-modules.js';
import { linkChecksModuleFor, oidcModuleFor, webhooksModuleFor } from './app-platform-modules.js';

/** What only a serving process has: the CLI builds the modules without it (no HTTP, no click pipeline). */
export interface ServerParts {
  metrics: Metrics;
  /** whether the process is busy serving (infra/serving-load.ts): the webhooks' deliveries give way then */
  busy: () => boolean;
  /** readiness checks: the database, the storage, what the shared state adds, a test's own */
  checks: Record<string, ReadinessCheck>;
  /** domain verification's HTTP proof: its port (default 80) and deadline (default 10 s); tests change both */
  domainVerification?: { httpPort?: number; deadlineMs?: number };
  /** the live event stream's heartbeat and poll (modules/events); tests shorten them */
  eventStream?: { heartbeatMs?: number; pollMs?: number };
  /** EVENTS_URL's bus: its reconnection and publishing timing, or another connector (tests) */
  eventsBus?: Omit<EventsBusDeps, 'url'>;
  /** SPEC §24's destination checks: their outbound requests (tests: a resolver of their own) and slice length */
  linkChecks?: { outbound?: OutboundHttp; sliceMs?: number };
  /**
   * The start's checks and set-up of accounts (the first admin), run on the core modules before anything opens
   * threads or files: a start it refuses leaves nothing running (the click journal's directory lock above all)
   */
  accounts?: (core: ReturnType<typeof createCoreModules>) => Promise<void>;
}

export interface ModulesDeps extends ModuleDeps {
  /** BLOCKED_HOSTS_FILE's list, read before anything else starts: link targets and domain fallbacks are checked against it */
  blockedHosts: HostBlocklist;
  /** null for the CLI: no click pipeline (its journal is the server's), no routes outside the API */
  server: ServerParts | null;
  /** links and visits per transaction of an import (the CLI's own; default: a server's) */
  importPace?: ImportPace;
}

interface LinkModuleDeps extends ModulesDeps {
  core: Pick<ReturnType<typeof createCoreModules>, 'paginator' | 'usersModule' | 'instanceModule'>;
}

/** The domains module, announcing its changes under this instance's `changeOrigin`. */
function domainsModuleFor(deps: LinkModuleDeps, changeOrigin: string) {
  const { config, storage, clock, log, core, blockedHosts, server } = deps;
  return createDomainsModule({
    db: storage.db,
    dialect: storage.dialect,
    users: core.usersModule.repository,
    clock,
    paginator: core.paginator,
    // SPEC §21: a host that is no verified domain answers the instance's app links.
    defaultAppLinks: (name) => core.instanceModule.instance.appLink(name),
    changeOrigin,
    blockedHosts,
    defaultHost: new URL(config.publicBaseUrl).hostname.toLowerCase(),
    verification: {
      dnsServers: config.dnsServers,
      allowPrivate: config.domainVerifyAllowPrivate,
      log,
      ...server?.domainVerification,
    },
  });
}

/**
 * How clicks travel (the clicks module's choice) for a server; for the CLI only the writers of imported visits
 * (nothing is queued: the CLI never serves a visit).
 */
function clickIngestFor({ config, storage, shared, clock, log, server }: LinkModuleDeps) {
  if (!server) return Promise.resolve(importOnlyClickIngest(storage));
  return createClickIngest({
    config,
    storage,
    log,
    clock,
    redis:
      shared.redis && shared.redirectTurn
        ? { client: shared.redis, turn: shared.redirectTurn, prefix: shared.redisPrefix }
        : null,
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
    config,
    storage,
    clock,
    domains: deps.domains,
    clicks: deps.sink,
    passwords: deps.passwords,
    passwordAttempts: shared.passwordAttempts,
    passwordHashBudget: shared.passwordHashBudget,
    country: createCountryLookup({ countryHeader: config.countryHeader, geoip: deps.geoip }),
    recordAddress: createAddressRecorder({ anonymize: config.ipAnonymize, salt: visitorSalt(jwtSecret) }),
    // The embedded database is one process's file: no other instance changes links behind the cache's back.
    soleWriter: isEmbedded(storage),
    limiter: shared.redirectLimiter,
    metrics: deps.metrics,
  });
}

/**
 * Domains, links and their clicks, and (for a server) the visit: how clicks travel (the clicks module's choice),
 * the modules. The redirect is built before links: its cache is the links module's VisitCache.
 */
async function createLinkModules(deps: LinkModuleDeps) {
  const { config, storage, clock, log, core, blockedHosts, server } = deps;
  const {
    paginator,
    usersModule: { repository: usersRepo, passwords },
  } = core;
  // Read before anything below starts threads or files: a GEOIP_DATABASE that is not a database stops the start-up
  // with nothing left running (the click ingest's writer thread and journal are never closed by a failed start).
  const geoip = deps.server ? await openGeoipDatabase(config.geoipDatabase) : null;
  // This instance's name in the outbox's events of links and domains (db/outbox.ts, infra/outbox-feed.ts).
  const changeOrigin = randomBytes(8).toString('hex');
  // PostgreSQL without pg_trgm: the link search scans (db/link-search.ts); said once a server start.
  if (deps.server) await warnWithoutSearchIndex(storage, (msg) => log.warn(msg));
  const domainsModule = await domainsModuleFor(deps, changeOrigin);
  const clickIngest = await clickIngestFor(deps);
  // The CLI serves no visit: no redirect module, no cache for links to drop names from.
  const redirectModule =
    server && clickIngest.sink
      ? createRedirectModuleFor({
          ...deps,
          sink: clickIngest.sink,
          domains: domainsModule.directory,
          passwords,
          geoip,
          metrics: server.metrics,
        })
      : null;
  const linksModule = createLinksModule({
    config,
    storage,
    users: usersRepo,
    paginator,
    clock,
    passwords,
    blockedHosts,
    changeOrigin,
    domains: domainsModule.directory,
    ...(redirectModule ? { cache: redirectModule.cache } : {}),
  });
  const clicksModule = createClicksModule({
    storage,
    links: linksModule.links,
    users: usersRepo,
    paginator,
    clock,
    retentionMonths: config.clickRetentionMonths,
    retentionDays: config.clickRetentionDays,
    log,
  });
  return { clickIngest, domainsModule, linksModule, redirectModule, clicksModule };
}

type LinkModules = Awaited<ReturnType<typeof createLinkModules>>;

/** Imports from other services (SPEC §20), writing links through the links module and visits through the clicks'. */
function importsModuleFor(
  { config, storage, clock, importPace }: ModulesDeps,
  { clickIngest, linksModule, clicksModule }: LinkModules,
) {
  return createImportsModule({
    db: storage.db,
    dialect: storage.dialect,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    writeVisits: clickIngest.writeImported,
    links: linksModule.linkImports,
    visitsWritten: () => clicksModule.stats.forgetRemembered(),
    limits: { maxResponseBytes: config.importMaxResponseBytes, timeoutMs: IMPORT_SOURCE_TIMEOUT_MS },
    ...(importPace ? { pace: importPace } : {}),
    ...(clickIngest.importedVisitsThread ? { visitThread: clickIngest.importedVisitsThread } : {}),
  });
}

/** What stands at the root beside the API, outside its hooks and limits: health, readiness and metrics; the dashboard. */
function serverModules(
  { config, clock, log }: ModulesDeps,
  server: ServerParts,
  { clickIngest, redirectModule }: LinkModules,
  eventsModule: Pick<EventsModule, 'busState'>,
) {
  const sink = clickIngest.sink;
  return [
    createHealthModule({
      checks: server.checks,
      metrics: server.metrics,
      metricsToken: config.metricsToken,
      clickStream: () => sink?.status().stream ?? null,
      clickJournalDegraded: () => sink?.status().journalDegraded === true,
      eventsBus: () => eventsModule.busState(),
    }),
    // What GET / means on a host: the visit policy's answer (a domain's root_redirect).
    createDashboardModule({ config, clock, log, domainRoot: (host) => redirectModule?.domainRoot(host) }),
  ];
}

/**
 * Every module, built once, for the server (`server` given) and the CLI (null). `list` is what app.ts wires,
 * in the order their routes are registered and their schemas added (and closed in reverse); the named ones are
 * the services a process uses directly.
 */
export async function createModules(deps: ModulesDeps) {
  const core = createCoreModules(deps);
  await deps.server?.accounts?.(core);
  const linkModules = await createLinkModules({ ...deps, core });
  const { clickIngest, domainsModule, linksModule, clicksModule } = linkModules;
  const importsModule = importsModuleFor(deps, linkModules);
  const webhooksModule = webhooksModuleFor(deps, core.paginator);
  // SPEC §22: the live stream and the sweep of the public events every module writes (db/events.ts)
  const eventsModule = createEventsModule({
    db: deps.storage.db,
    clock: deps.clock,
    retentionDays: deps.config.eventsRetentionDays,
    embedded: isEmbedded(deps.storage),
    hub: { log: deps.log, ...deps.server?.eventStream },
    log: deps.log,
    dialect: deps.storage.dialect,
    databaseUrl: deps.config.databaseUrl,
    // EVENTS_URL's bus: a server publishes to it, the CLI never does
    bus: deps.server && deps.config.eventsUrl ? { url: deps.config.eventsUrl, ...deps.server.eventsBus } : null,
    ...(deps.server ? { metrics: deps.server.metrics } : {}),
  });
  const list: AppModule[] = [
    core.usersModule,
    core.twoFactorModule,
    core.tokensModule,
    core.ordersModule,
    clickIngest,
    domainsModule,
    linksModule,
    clicksModule,
    core.apiKeysModule,
    core.idempotencyModule,
    core.instanceModule,
    importsModule,
    webhooksModule,
    core.outboxModule,
    eventsModule,
    core.auditModule,
    ...(deps.server
      ? [
          oidcModuleFor(deps, core),
          linkChecksModuleFor(deps, deps.server, linkModules),
          ...serverModules(deps, deps.server, linkModules, eventsModule),
        ]
      : []),
    ...(linkModules.redirectModule ? [linkModules.redirectModule] : []),
  ];
  return { ...core, ...linkModules, importsModule, eventsModule, webhooksModule, list };
}

export type Modules = Awaited<ReturnType<typeof createModules>>;
