import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../../config.js';
import type { Storage } from '../../db/database.js';
import type { LinkRow } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { Paginator } from '../../lib/pagination.js';
import type { PasswordHasher, UsersRepository } from '../users/index.js';
import type { DomainDirectory } from '../domains/index.js';
import { NOTHING_BLOCKED, type HostBlocklist } from '../../lib/host-blocklist.js';
import { createLinkModeration } from './link-moderation.js';
import { createLinksBulk } from './links.bulk.js';
import { createLinksRepository, linkScansOf, type LinksRepository } from './links.repository.js';
import { createLinksExport } from './links.export.js';
import { linksRoutes } from './links.routes.js';
import { linkSchemas } from './links.schemas.js';
import { createLinksService } from './links.service.js';
import { linkV2Schemas } from './links.v2.js';
import { linkImportsFor } from './link-imports.js';
import { NO_VISIT_CACHE, type VisitCache } from './visit-cache.js';
import type { ApiVersion } from '../../plugins/versioning.js';
import { appModule } from '../../app-module.js';

export const linksModuleSchemas = [...linkSchemas, ...linkV2Schemas];

export interface LinksModuleDeps {
  config: Pick<Config, 'publicBaseUrl' | 'port' | 'anonymousLinks'>;
  storage: Pick<Storage, 'db' | 'dialect' | 'sqlite'>;
  users: Pick<UsersRepository, 'findById'>;
  paginator: Paginator;
  clock: Clock;
  /** link passwords are hashed like users' (scrypt on the thread pool) */
  passwords: Pick<PasswordHasher, 'hash'>;
  /** BLOCKED_HOSTS_FILE's list (infra/blocked-hosts-file.ts); default: nothing blocked */
  blockedHosts?: HostBlocklist;
  /** this instance's redirect cache (the redirect module's): a changed link's names leave it; default: none */
  cache?: VisitCache;
  /** this instance's name in the outbox (db/outbox.ts, infra/outbox-feed.ts); default: a random one */
  changeOrigin?: string;
  /** the domains module's directory (SPEC §19); default: only the default domain */
  domains?: Pick<DomainDirectory, 'byIdOf' | 'named' | 'reload' | 'reloadHostname'>;
}

/** How often links past their expiry are swept (their codes stay blocked; SPEC §6). */
const SWEEP_EVERY_MS = 60_000;

/** The links service over this module's repository and cache. */
function linksServiceFor(
  deps: LinksModuleDeps,
  linksRepository: LinksRepository,
  cache: VisitCache,
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

/** Links, wired: the service, bulk, export, moderation, imports' way in, the routes, and the sweep of expired links. */
export function createLinksModule(deps: LinksModuleDeps) {
  const { config, storage, clock } = deps;
  const blockedHosts = deps.blockedHosts ?? NOTHING_BLOCKED;
  const cache = deps.cache ?? NO_VISIT_CACHE;
  // This instance's name in the outbox (infra/outbox-feed.ts).
  const changeOrigin = deps.changeOrigin ?? randomBytes(8).toString('hex');
  // The link in its public events (SPEC §22) as the API shows it: the service's view, built just below.
  const publicLink = (row: LinkRow): unknown => links.toLink(row);
  const scans = linkScansOf(storage);
  const linksRepository = createLinksRepository(storage, deps.paginator, changeOrigin, publicLink, scans);
  const links = linksServiceFor(deps, linksRepository, cache, blockedHosts);
  const bulk = createLinksBulk(links);
  const linkImports = linkImportsFor({ config, storage, blockedHosts, cache, clock, publicLink });
  const exports = createLinksExport({
    links: linksRepository,
    users: deps.users,
    paginator: deps.paginator,
    clock,
    domains: links.domains,
  });
  const moderation = createLinkModeration({
    links: linksRepository,
    cache,
    blockedHosts,
    clock,
    paginator: deps.paginator,
    toLink: links.toLink,
    domains: links.domains,
  });

  return appModule({
    links,
    /** the importers' way in (SPEC §25: imported links follow the API's rules) */
    linkImports,
    moderation,
    blockedHosts,
    changeOrigin,
    schemas: linksModuleSchemas,
    jobs: [{ name: 'sweep-expired-links', everyMs: SWEEP_EVERY_MS, run: () => links.sweepExpired() }],
    close: async () => scans?.stop(),
    /** JSON routes, registered inside the /api/v1 context */
    apiRoutes: (async (api, opts) => {
      await api.register(linksRoutes, {
        links,
        bulk,
        exports,
        moderation,
        basePath: opts.basePath,
        version: opts.version,
      });
    }) as FastifyPluginAsync<{ basePath: string; version: ApiVersion }>,
  });
}

export type LinksModule = ReturnType<typeof createLinksModule>;
