import type { Kysely } from 'kysely';
import { appModule } from '../../app-module.js';
import type { Dialect } from '../../db/dialect.js';
import type { Database } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { NOTHING_BLOCKED, type HostBlocklist } from '../../lib/host-blocklist.js';
import type { AppLinkDocument } from '../../lib/app-links.js';
import type { Paginator } from '../../lib/pagination.js';
import type { UsersRepository } from '../users/index.js';
import { clearBlockedFallbacks } from './blocked-fallbacks.js';
import type { DomainDirectory } from './domain-directory.js';
import { DomainRegistry } from './domain-registry.js';
import { createDomainChecker, type DomainChecker, type DomainCheckerOptions } from './domain-verification.js';
import { createDomainsRepository } from './domains.repository.js';
import { domainsPublicRoutes } from './domains.public.routes.js';
import { domainsRoutes } from './domains.routes.js';
import { domainSchemas } from './domains.schemas.js';
import { createDomainsService } from './domains.service.js';

/** How often verified domains due for their daily re-check are looked for. */
const RECHECK_JOB_EVERY_MS = 3_600_000;

export interface DomainsModuleDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  users: Pick<UsersRepository, 'findById'>;
  clock: Clock;
  paginator: Paginator;
  /** the default domain's host (PUBLIC_BASE_URL's) */
  defaultHost: string;
  /** how domains are checked: DNS_SERVERS, DOMAIN_VERIFY_ALLOW_PRIVATE, the HTTP proof's port and deadline */
  verification: DomainCheckerOptions;
  /** a checker of another kind */
  checker?: DomainChecker;
  /** this instance's name in change messages (the links module's, on the same channel) */
  changeOrigin: string;
  /** BLOCKED_HOSTS_FILE's list: fallbacks to a blocked host are refused (SPEC §25); default: nothing blocked */
  blockedHosts?: HostBlocklist;
  /** SPEC §21: the default domain's app-links document (JSON text; null: none); default: none */
  defaultAppLinks?: (name: AppLinkDocument) => Promise<string | null>;
}

/**
 * Domains (SPEC §19): the resource and its verification, the registry every visit resolves its host in, the
 * two root-level answers (the HTTP proof, the TLS `ask`), and the daily re-check.
 */
export async function createDomainsModule(deps: DomainsModuleDeps) {
  const registry = new DomainRegistry();
  const repository = createDomainsRepository(deps.db, deps.dialect, deps.paginator, deps.changeOrigin);
  const checker = deps.checker ?? createDomainChecker(deps.verification);
  const domains = createDomainsService({
    domains: repository,
    registry,
    users: deps.users,
    checker,
    dialect: deps.dialect,
    clock: deps.clock,
    paginator: deps.paginator,
    defaultHost: deps.defaultHost,
    ...(deps.blockedHosts ? { blockedHosts: deps.blockedHosts } : {}),
  });
  await domains.reloadAll();
  return appModule({
    domains,
    registry,
    /** what the links and redirect modules read: the registry, and a reload of a domain made elsewhere a moment ago */
    directory: {
      byIdOf: (id) => registry.byIdOf(id),
      named: (hostname, viewer) => registry.named(hostname, viewer),
      servedBy: (host) => registry.servedBy(host),
      reload: (id) => domains.reload(id),
      reloadHostname: (hostname) => domains.reloadHostname(hostname),
    } satisfies DomainDirectory as DomainDirectory,
    schemas: domainSchemas,
    apiRoutes: async (api, { basePath, version }) => {
      await api.register(domainsRoutes, { domains, basePath, version });
    },
    /**
     * GET /.well-known/ferry-verification/{token}, GET /internal/tls/allowed and the app links'
     * /.well-known/apple-app-site-association and /.well-known/assetlinks.json, at the root
     */
    rootRoutes: async (scope: Parameters<typeof domainsPublicRoutes>[0]) => {
      await scope.register(domainsPublicRoutes, {
        domains,
        registry,
        appLinks: {
          ofDomain: (id, name) => repository.appLink(id, name),
          ofDefault: deps.defaultAppLinks ?? (() => Promise.resolve(null)),
        },
      });
    },
    /** clears every fallback to a host BLOCKED_HOSTS_FILE blocks (SPEC §25; `ferry admin`); how many */
    clearBlockedFallbacks: () => clearBlockedFallbacks(deps, deps.blockedHosts ?? NOTHING_BLOCKED),
    jobs: [{ name: 'domain-recheck', everyMs: RECHECK_JOB_EVERY_MS, run: () => domains.recheckDue() }],
  });
}

export type DomainsModule = Awaited<ReturnType<typeof createDomainsModule>>;
